//! Measures what a running lab sends one tab: bytes and frames per second.
//!
//! Start the lab (`cargo run --release -p quadrat-lab -- --port 8080`),
//! then `cargo run --release -p quadrat-lab --example stream_rate --
//! ws://127.0.0.1:8080/ws 10000 10`: it connects as a tab would, sets the
//! object count, waits two seconds for the new layout, then reads every
//! message for the given seconds and prints the rates.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "ws://127.0.0.1:8080/ws".to_owned());
    let count: u32 = args.next().map_or(10_000, |a| a.parse().expect("a count"));
    let seconds: u64 = args.next().map_or(10, |a| a.parse().expect("seconds"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let (mut socket, _) = connect_async(url.as_str()).await.expect("connected");
        let settings = format!(r#"{{"type":"settings","count":{count}}}"#);
        socket.send(Message::text(settings)).await.expect("sent");
        let settle = Instant::now() + Duration::from_secs(2);
        while Instant::now() < settle {
            socket.next().await.expect("open").expect("a message");
        }
        let (mut bytes, mut frames) = (0u64, 0u64);
        let start = Instant::now();
        let end = start + Duration::from_secs(seconds);
        while Instant::now() < end {
            if let Message::Binary(b) = socket.next().await.expect("open").expect("a message") {
                bytes += b.len() as u64;
                frames += 1;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{count} objects: {:.2} MB/s, {:.1} frames/s, {:.1} KB a frame ({frames} frames in {secs:.1} s)",
            bytes as f64 / secs / 1e6,
            frames as f64 / secs,
            bytes as f64 / frames.max(1) as f64 / 1e3,
        );
        let _ = socket.close(None).await;
    });
}
