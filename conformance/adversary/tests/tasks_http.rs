//! The smol client with the hyper transport against hostile task servers over Streamable HTTP
//! (`mcp-adversary http task_<mode>`, a real child process on 127.0.0.1): each scenario of
//! `tasks_common`, then a collateral `echo`, the case's peak memory, and no descriptor (pooled
//! sockets included), thread or process left once the client is closed.

mod common;
mod tasks_common;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use common::HttpServer as Server;
use common::{Resources, peak_rss_bytes, reset_peak_rss, rss_bytes};
use mcp_hyper::HyperTransport;
use mcp_smol::Client;
use mcp_smol::mcp_sansio::http::HttpConfig;
use tasks_common::{Asker, RSS_LIMIT, answers, builder, still_answers};

async fn connect(mode: &str, url: &str, asker: Asker) -> Client {
    builder(mode, asker).spawn_http(HttpConfig::new(url), HyperTransport::new()).await.expect("connecting")
}

/// Runs `scenario` against `mcp-adversary http <mode>`, after a warm-up connection, and checks
/// collateral calls, memory and leaks around it.
fn run<F: Future<Output = ()>>(mode: &str, scenario: impl FnOnce(Client, Arc<AtomicUsize>) -> F) {
    let _guard = common::serial();
    let server = Server::start(mode);
    smol::block_on(async {
        let client = connect(mode, &server.url, Asker::new(true)).await;
        still_answers(&client, "warm-up").await;
        client.close().await;
    });
    let before = Resources::settled(Duration::from_millis(100), Duration::from_secs(2));
    smol::block_on(async {
        let asker = Asker::new(answers(mode));
        let client = connect(mode, &server.url, asker.clone()).await;
        let rss = rss_bytes();
        assert!(reset_peak_rss(), "the kernel refused to reset the peak RSS");
        scenario(client.clone(), asker.asked.clone()).await;
        still_answers(&client, &format!("after {mode}")).await;
        let growth = peak_rss_bytes().saturating_sub(rss);
        assert!(growth < RSS_LIMIT, "{mode}: resident memory grew by {} KiB", growth / 1024);
        client.close().await;
    });
    before.assert_nothing_leaked(mode);
    drop(server);
}

#[test]
fn a_task_id_given_to_two_calls_fails_the_second_and_the_first_goes_on() {
    run("task_id_reuse", tasks_common::id_reuse);
}

#[test]
fn a_task_asking_for_input_without_end_is_cancelled_at_the_bound() {
    run("task_input_flood", tasks_common::input_flood);
}

#[test]
fn a_burst_of_task_input_requests_is_refused_against_the_budget() {
    run("task_input_burst", tasks_common::input_burst);
}

#[test]
fn a_task_answer_with_escaped_names_is_followed() {
    run("task_escaped", tasks_common::escaped);
}

#[test]
fn an_undecodable_task_fails_its_call_and_is_cancelled() {
    run("task_undecodable", tasks_common::undecodable);
}

#[test]
fn a_flood_of_tasks_result_for_a_hosted_task_is_refused_past_the_budget() {
    run("task_result_flood", tasks_common::result_flood);
}
