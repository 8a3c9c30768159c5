//! The smol client over HTTP with the hyper transport against the Rust bench server on
//! 127.0.0.1: a plain-`cargo test` check (no Node or Python needed) that calls work, sequential
//! calls reuse one connection, concurrent calls use one connection each, and close ends the
//! session with `DELETE`.

use std::time::Duration;

use mcp_benches::http_server::BenchServer;
use mcp_hyper::HyperTransport;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::ClientApi;
use mcp_smol::ClientBuilder;
use serde_json::json;

#[test]
fn calls_reuse_connections_and_close_ends_the_session() {
    let server = BenchServer::start().unwrap();
    smol::block_on(async {
        let transport = HyperTransport::new();
        let client = ClientBuilder::new(Implementation::new("http-client-test", "0.1.0"))
            .spawn_http(HttpConfig::new(server.url()).header("Authorization", "Bearer t"), transport.clone())
            .await
            .unwrap();
        assert_eq!(client.server_info().unwrap().name, "mcp-bench-http-server");
        // The `initialized` notice and the GET (answered 405) run beside the first calls.
        client.call_tool("echo", json!({"message": "warm-up"})).await.unwrap();
        let opened = transport.connections_opened();
        assert!(opened <= 2, "{opened}");
        for i in 0..50 {
            let result = client.call_tool("echo", json!({"message": format!("m{i}")})).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some(format!("m{i}").as_str()));
        }
        assert_eq!(transport.connections_opened(), opened, "sequential calls reuse the connection");

        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let client = client.clone();
                smol::spawn(async move { client.call_tool("echo", json!({"message": i.to_string()})).await })
            })
            .collect();
        for (i, task) in tasks.into_iter().enumerate() {
            assert_eq!(task.await.unwrap().content[0].as_text(), Some(i.to_string().as_str()));
        }
        assert!(transport.connections_opened() <= opened + 8, "at most one connection per concurrent call");
        assert_eq!(server.connections_accepted(), transport.connections_opened());

        let unknown = client.request_raw("no/such/method", None, Default::default()).await.unwrap_err();
        assert_eq!(unknown.server_error().map(|e| e.code), Some(-32601));
        assert!(client.close_within(Duration::from_secs(5)).await, "close (with DELETE) finishes promptly");
    });
}
