//! The servers the curves bench measures against, checked with the client they measure: the
//! bench HTTP server's `blob` tool (a prebuilt result, as JSON and as an event stream) and
//! `bench-echo`'s tool-list mode (`BENCH_ECHO_TOOLS`), whose results must pass our output-schema
//! validation, since the bench times exactly that.

use mcp_benches::http_server::{BenchServer, Mode};
use mcp_hyper::HyperTransport;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{ClientApi, ClientBuilder, ServerCommand, StderrSink};
use serde_json::json;

#[test]
fn blob_results_arrive_whole_as_json_and_as_an_event_stream() {
    for mode in [Mode::Json, Mode::Sse] {
        let server = BenchServer::start_with(mode).unwrap();
        smol::block_on(async {
            let client = ClientBuilder::new(Implementation::new("curves-test", "0.1.0"))
                .spawn_http(HttpConfig::new(server.url()), HyperTransport::new())
                .await
                .unwrap();
            // The same size twice: the second answer comes from the prebuilt body.
            for size in [0, 1024, 3 << 20, 3 << 20] {
                let result = client.call_tool("blob", json!({"size": size})).await.unwrap();
                let text = result.content[0].as_text().unwrap();
                assert_eq!(text.len(), size, "{mode:?}");
                assert!(text.bytes().all(|b| b == b'x'));
            }
            client.close().await;
        });
    }
}

#[test]
fn tool_list_mode_lists_tools_whose_results_match_their_output_schemas() {
    let command = ServerCommand::new(env!("CARGO_BIN_EXE_bench-echo"))
        .env("BENCH_ECHO_TOOLS", "120")
        .stderr(StderrSink::Discard);
    smol::block_on(async {
        let client = ClientBuilder::new(Implementation::new("curves-test", "0.1.0"))
            .validate_output(true)
            .spawn_stdio(&command)
            .await
            .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 120);
        assert_eq!(tools[119].name, "t119");
        assert!(tools.iter().all(|tool| tool.output_schema.is_some()));
        for i in [0, 7, 119] {
            // Checked against t{i}'s schema: a mismatch would fail the call.
            let result = client.call_tool(&format!("t{i}"), json!({})).await.unwrap();
            assert_eq!(result.structured_content, Some(json!({"count": i, "name": format!("t{i}")})));
        }
        client.close().await;
    });
}
