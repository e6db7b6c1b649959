//! The lab's server, started on an ephemeral port inside the test, with
//! real WebSocket clients: replies to good and bad messages, frames that
//! keep coming, many clients at once, a client that stops reading, limits,
//! and a clean shutdown. Then dead and hostile clients: tabs whose
//! connection died, request heads trickled a byte at a time, and frames that
//! break the WebSocket protocol.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use quadrat_lab::serve::frame::{Decoder, Frame, Header};
use quadrat_lab::serve::{Options, Server, Stats, protocol};
use quadrat_lab::sim::{Marks, Settings};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{interval, sleep, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::{CloseFrame, Frame as WsFrame};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A tab: its socket, and the decoder that keeps the picture between
/// frames (each frame says what changed since the one before).
struct Client {
    socket: Socket,
    decoder: Decoder,
}

impl From<Socket> for Client {
    fn from(socket: Socket) -> Client {
        Client {
            socket,
            decoder: Decoder::new(),
        }
    }
}

impl std::ops::Deref for Client {
    type Target = Socket;
    fn deref(&self) -> &Socket {
        &self.socket
    }
}

impl std::ops::DerefMut for Client {
    fn deref_mut(&mut self) -> &mut Socket {
        &mut self.socket
    }
}

/// Generous bound on any single wait, so a broken server fails the test
/// rather than hanging it.
const WAIT: Duration = Duration::from_secs(20);

struct Lab {
    addr: SocketAddr,
    stats: Arc<Stats>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Lab {
    async fn start(options: Options) -> Lab {
        let server = Server::bind(Options { port: 0, ..options }).await.unwrap();
        let addr = server.local_addr().unwrap();
        assert_eq!(server.url(), format!("http://{addr}/"));
        let stats = server.stats();
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(server.serve(async {
            let _ = stopped.await;
        }));
        Lab {
            addr,
            stats,
            stop: Some(stop),
            task,
        }
    }

    async fn connect(&self) -> Client {
        let (socket, _) = tokio_tungstenite::connect_async(format!("ws://{}/ws", self.addr))
            .await
            .unwrap();
        socket.into()
    }

    /// Stops the server and waits until it has shut down.
    async fn shut_down(mut self) {
        let _ = self.stop.take().unwrap().send(());
        timeout(WAIT, self.task).await.unwrap().unwrap().unwrap();
    }

    /// Waits until no HTTP connection is open.
    async fn wait_connections_closed(&self) {
        let start = Instant::now();
        while self.stats.connections() > 0 {
            assert!(
                start.elapsed() < WAIT,
                "connections stuck at {}",
                self.stats.connections()
            );
            sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until `ok(sessions)` holds.
    async fn wait_sessions(&self, ok: impl Fn(usize) -> bool) {
        let start = Instant::now();
        while !ok(self.stats.sessions()) {
            assert!(
                start.elapsed() < WAIT,
                "sessions stuck at {}",
                self.stats.sessions()
            );
            sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The next JSON text message, skipping frames (decoded all the same: the
/// frames after them are coded against them).
async fn next_text(client: &mut Client) -> Value {
    loop {
        match timeout(WAIT, client.socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
            Message::Binary(bytes) => {
                client.decoder.decode(&bytes).unwrap();
            }
            // The server's keep-alive pings (every 10 s) come on long tests;
            // the client library answers them by itself.
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The next frame, skipping text messages.
async fn next_frame(client: &mut Client) -> Frame {
    loop {
        match timeout(WAIT, client.socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            Message::Binary(bytes) => return client.decoder.decode(&bytes).unwrap(),
            Message::Text(_) | Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The next frame that satisfies `ok`.
async fn frame_where(socket: &mut Client, ok: impl Fn(&Frame) -> bool) -> Frame {
    let start = Instant::now();
    loop {
        let frame = next_frame(socket).await;
        if ok(&frame) {
            return frame;
        }
        assert!(
            start.elapsed() < WAIT,
            "no such frame; last {:?}",
            frame.header
        );
    }
}

async fn send(socket: &mut Socket, text: &str) {
    socket.send(Message::text(text)).await.unwrap();
}

/// The response to a GET of `path` with this `Host`, read to the end.
async fn get(addr: SocketAddr, path: &str, host: &str) -> String {
    timeout(WAIT, async {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        tcp.read_to_string(&mut response).await.unwrap();
        response
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn serves_the_page_to_localhost_only() {
    let lab = Lab::start(Options::default()).await;
    let addr = lab.addr;
    let get = |path: &'static str, host: String| async move { get(addr, path, &host).await };
    let here = lab.addr.to_string();
    let page = get("/", here.clone()).await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("content-type: text/html"));
    assert!(page.contains("content-security-policy:"));
    assert!(page.contains("<canvas id=\"view\""));
    let script = get("/app.js", format!("localhost:{}", lab.addr.port())).await;
    assert!(script.starts_with("HTTP/1.1 200") && script.contains("text/javascript"));
    assert!(get("/style.css", here.clone()).await.contains("text/css"));
    assert!(
        get("/nothing-here", here.clone())
            .await
            .starts_with("HTTP/1.1 404")
    );
    // DNS rebinding: a page elsewhere that resolves to this machine.
    let rebound = get("/", format!("evil.example:{}", lab.addr.port())).await;
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound}");
    lab.shut_down().await;
}

#[tokio::test]
async fn hello_then_frames_keep_coming() {
    let lab = Lab::start(Options::default()).await;
    let mut socket = lab.connect().await;
    let hello = next_text(&mut socket).await;
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["settings"]["count"], Settings::default().count);
    assert_eq!(hello["limits"]["brute_force_max"], 5_000);

    let first = next_frame(&mut socket).await;
    let mut last = first.header.frame;
    for _ in 0..30 {
        let frame = next_frame(&mut socket).await;
        assert!(frame.header.frame > last);
        assert_eq!(frame.header.count as usize, Settings::default().count);
        assert_eq!(frame.objects.len(), Settings::default().count + 1);
        assert!(frame.header.nodes > 1 && !frame.leaves.is_empty());
        last = frame.header.frame;
    }
    // The objects move.
    assert_ne!(
        first.objects[0].center,
        next_frame(&mut socket).await.objects[0].center
    );
    assert_eq!(lab.stats.sessions(), 1);
    lab.shut_down().await;
}

#[tokio::test]
async fn good_messages_change_the_simulation() {
    let lab = Lab::start(Options::default()).await;
    let mut socket = lab.connect().await;
    next_text(&mut socket).await;

    send(
        &mut socket,
        r#"{"type":"settings","count":300,"scene":"clustered","max_items":4}"#,
    )
    .await;
    let reply = next_text(&mut socket).await;
    assert_eq!(reply["type"], "settings", "{reply}");
    assert_eq!(reply["settings"]["count"], 300);
    assert_eq!(reply["settings"]["scene"], "clustered");
    assert_eq!(reply["settings"]["max_items"], 4);
    frame_where(&mut socket, |f| f.header.count == 300).await;

    // The query: the server's answer is what it marks.
    send(&mut socket, r#"{"type":"query","rect":[0,0,600,600]}"#).await;
    let frame = frame_where(&mut socket, |f| f.header.flags & Header::QUERY != 0).await;
    let marked = frame
        .objects
        .iter()
        .filter(|o| o.marks.has(Marks::IN_QUERY))
        .count();
    assert!(frame.header.query_hits > 0);
    assert_eq!(marked, frame.header.query_hits as usize);

    // The player moves right while steered.
    let before = next_frame(&mut socket).await.header.player;
    send(&mut socket, r#"{"type":"player","dx":1,"dy":0}"#).await;
    let moved = frame_where(&mut socket, |f| f.header.player.x > before.x + 20.0).await;
    assert_eq!(moved.header.player.y, before.y);
    send(&mut socket, r#"{"type":"player","dx":0,"dy":0}"#).await;

    // Pause: frames stop until a step or a change.
    send(&mut socket, r#"{"type":"pause","paused":true}"#).await;
    let paused = frame_where(&mut socket, |f| f.header.flags & Header::PAUSED != 0).await;
    let quiet = timeout(Duration::from_millis(300), async {
        // Frames still in flight may arrive; the objects no longer move.
        loop {
            let f = next_frame(&mut socket).await;
            assert_eq!(f.objects[0].center, paused.objects[0].center);
        }
    })
    .await;
    assert!(quiet.is_err(), "frames stopped");
    send(&mut socket, r#"{"type":"step"}"#).await;
    let stepped = next_frame(&mut socket).await;
    assert_eq!(stepped.header.frame, paused.header.frame + 1);
    assert_ne!(stepped.objects[0].center, paused.objects[0].center);

    // Pick: the nearest object to a point, marked.
    let target = stepped.objects[10].center;
    send(
        &mut socket,
        &format!(r#"{{"type":"pick","at":[{},{}]}}"#, target.x, target.y),
    )
    .await;
    let picked = next_frame(&mut socket).await;
    assert_ne!(picked.header.flags & Header::PICKED, 0);
    let index = picked.header.picked as usize;
    assert!(picked.objects[index].marks.has(Marks::PICKED));
    assert!(picked.header.picked_distance < 1.0);

    // Brute force below its limit.
    send(
        &mut socket,
        r#"{"type":"settings","broad_phase":"brute_force"}"#,
    )
    .await;
    assert_eq!(
        next_text(&mut socket).await["settings"]["broad_phase"],
        "brute_force"
    );
    let brute = frame_where(&mut socket, |f| f.header.flags & Header::BRUTE_FORCE != 0).await;
    assert_eq!(brute.header.checks, 301 * 300 / 2);
    lab.shut_down().await;
}

#[tokio::test]
async fn bad_messages_get_errors_and_change_nothing() {
    let lab = Lab::start(Options::default()).await;
    let mut socket = lab.connect().await;
    let hello = next_text(&mut socket).await;
    let settings = hello["settings"].clone();

    let bad = [
        "not json",
        r#"{"type":"teleport"}"#,
        r#"{"type":"settings","count":"lots"}"#,
        r#"{"type":"settings","count":1000000000}"#,
        r#"{"type":"settings","size":null}"#,
        r#"{"type":"settings","size":-3}"#,
        r#"{"type":"settings","max_depth":25}"#,
        r#"{"type":"settings","max_items":0}"#,
        r#"{"type":"settings","count":20000,"broad_phase":"brute_force"}"#,
        r#"{"type":"player","dx":5,"dy":0}"#,
        r#"{"type":"query","rect":[0,0,"a",1]}"#,
    ];
    for text in bad {
        send(&mut socket, text).await;
        let reply = next_text(&mut socket).await;
        assert_eq!(reply["type"], "error", "{text} → {reply}");
        assert!(!reply["message"].as_str().unwrap().is_empty());
    }
    socket.send(Message::binary(vec![1u8, 2, 3])).await.unwrap();
    let reply = next_text(&mut socket).await;
    assert!(
        reply["message"].as_str().unwrap().contains("binary"),
        "{reply}"
    );

    // Nothing changed, and the session goes on.
    send(&mut socket, r#"{"type":"settings"}"#).await;
    assert_eq!(next_text(&mut socket).await["settings"], settings);
    let a = next_frame(&mut socket).await;
    let b = next_frame(&mut socket).await;
    assert!(b.header.frame > a.header.frame);
    assert_eq!(b.header.count as usize, Settings::default().count);
    assert_eq!(b.header.flags & (Header::BRUTE_FORCE | Header::QUERY), 0);

    // A message over the size limit ends this connection only.
    let huge = format!(r#"{{"type":"settings","pad":"{}"}}"#, "x".repeat(10_000));
    let _ = socket.send(Message::text(huge)).await;
    let mut other = lab.connect().await;
    assert_eq!(next_text(&mut other).await["type"], "hello");
    next_frame(&mut other).await;
    lab.shut_down().await;
}

#[tokio::test]
async fn twenty_clients_at_once() {
    let lab = Lab::start(Options::default()).await;
    let mut sockets = Vec::new();
    for _ in 0..20 {
        sockets.push(lab.connect().await);
    }
    let clients = sockets
        .into_iter()
        .enumerate()
        .map(|(i, mut socket)| async move {
            next_text(&mut socket).await;
            let count = 50 + 10 * i;
            send(
                &mut socket,
                &format!(r#"{{"type":"settings","count":{count}}}"#),
            )
            .await;
            let frame = frame_where(&mut socket, |f| f.header.count as usize == count).await;
            // Frames keep coming, each client seeing its own world.
            for _ in 0..20 {
                let next = next_frame(&mut socket).await;
                assert!(next.header.frame > frame.header.frame);
                assert_eq!(next.objects.len(), count + 1);
            }
            socket
        });
    let sockets = futures_util::future::join_all(clients).await;
    assert_eq!(lab.stats.sessions(), 20);
    assert_eq!(lab.stats.sessions_started(), 20);
    for mut socket in sockets {
        socket.close(None).await.unwrap();
    }
    // Closed tabs stop their simulations.
    lab.wait_sessions(|n| n == 0).await;
    lab.shut_down().await;
}

#[tokio::test]
async fn a_slow_client_gets_frames_dropped_and_a_stalled_one_is_cut_off() {
    // Long enough that the slow client, which reads a frame now and then
    // on a busy machine, is never taken for stalled.
    let lab = Lab::start(Options {
        stall_timeout: Duration::from_secs(3),
        ..Options::default()
    })
    .await;
    let big = r#"{"type":"settings","count":40000}"#;

    // A client that stops reading altogether, with big frames.
    let mut stalled = lab.connect().await;
    next_text(&mut stalled).await;
    send(&mut stalled, big).await;

    // A slow client: reads a frame now and then.
    let mut slow = lab.connect().await;
    next_text(&mut slow).await;
    send(&mut slow, big).await;
    frame_where(&mut slow, |f| f.header.count == 40_000).await;

    // A good client keeps getting fresh frames all along.
    let mut good = lab.connect().await;
    next_text(&mut good).await;
    let mut numbers = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        numbers.push(next_frame(&mut good).await.header.frame);
        if numbers.len() % 10 == 0 {
            next_frame(&mut slow).await;
            sleep(Duration::from_millis(10)).await;
        }
    }
    assert!(numbers.len() >= 30, "only {} frames in 3 s", numbers.len());
    assert!(numbers.windows(2).all(|w| w[0] < w[1]));

    // The slow client is sent fewer ticks: they were dropped, not queued.
    // Its frames stay consecutive (each is coded against the one before,
    // which it must have had), and the count of ticks not sent grows. On a
    // busy machine the socket buffers may still hold frames from before
    // the drops, so it reads on, slowly, until it gets past them.
    let mut seen: Vec<Header> = Vec::new();
    let start = Instant::now();
    loop {
        seen.push(next_frame(&mut slow).await.header);
        assert!(seen.windows(2).all(|w| w[1].frame == w[0].frame + 1));
        let grew = seen.windows(2).any(|w| w[1].dropped > w[0].dropped);
        if grew {
            break;
        }
        assert!(
            start.elapsed() < WAIT,
            "no frames dropped: {:?}",
            seen.iter()
                .map(|h| (h.frame, h.dropped))
                .collect::<Vec<_>>()
        );
        sleep(Duration::from_millis(50)).await;
    }

    // The stalled client's session ended (its simulation stopped) while
    // the others go on: sessions drop from 3 to 2.
    lab.wait_sessions(|n| n == 2).await;
    next_frame(&mut good).await;
    drop(stalled);
    lab.shut_down().await;
}

#[tokio::test]
async fn refuses_other_origins_and_too_many_tabs() {
    let lab = Lab::start(Options {
        max_sessions: 2,
        ..Options::default()
    })
    .await;
    let mut request = format!("ws://{}/ws", lab.addr)
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("origin", HeaderValue::from_static("http://evil.example"));
    // Refused with a close code and a reason a page can read; no session.
    let (mut foreign, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let closed = close_frame(&mut foreign).await;
    assert_eq!(u16::from(closed.code), protocol::REFUSED_ORIGIN);
    assert!(closed.reason.contains("http://evil.example"), "{closed:?}");
    assert_eq!(lab.stats.sessions(), 0);

    let mut same = format!("ws://{}/ws", lab.addr)
        .into_client_request()
        .unwrap();
    let origin = HeaderValue::from_str(&format!("http://{}", lab.addr)).unwrap();
    same.headers_mut().insert("origin", origin);
    let (_first, _) = tokio_tungstenite::connect_async(same).await.unwrap();
    let _second = lab.connect().await;
    lab.wait_sessions(|n| n == 2).await;
    let closed = refused(lab.addr).await;
    assert_eq!(u16::from(closed.code), protocol::TOO_MANY_TABS);
    assert_eq!(
        closed.reason.as_str(),
        "too many tabs: 2 of 2 sessions in use"
    );
    assert_eq!(lab.stats.sessions(), 2);
    lab.shut_down().await;
}

#[tokio::test]
async fn shutdown_closes_every_session() {
    let lab = Lab::start(Options::default()).await;
    let mut a = lab.connect().await;
    let mut b = lab.connect().await;
    next_frame(&mut a).await;
    next_frame(&mut b).await;
    let stats = Arc::clone(&lab.stats);
    lab.shut_down().await;
    assert_eq!(stats.sessions(), 0);
    for socket in [&mut a, &mut b] {
        let close = timeout(WAIT, async {
            loop {
                match socket.next().await {
                    Some(Ok(Message::Close(frame))) => return frame,
                    Some(Ok(_)) => {}
                    other => panic!("no close frame: {other:?}"),
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(u16::from(close.unwrap().code), 1001);
    }
}

/// Settings that each build a new level of this many tiles (less one, every
/// other time, so that each is a change).
fn level_rebuild(i: usize, tiles: usize) -> String {
    format!(
        r#"{{"type":"settings","scene":"level","count":10,"tiles":{}}}"#,
        tiles - i % 2
    )
}

#[tokio::test]
async fn a_tab_that_leaves_its_queue_full_frees_its_slot_at_once() {
    let lab = Lab::start(Options {
        max_sessions: 1,
        ..Options::default()
    })
    .await;
    let mut tab = lab.connect().await;
    next_text(&mut tab).await;
    // Slow commands queued, then the tab leaves while the first is applied.
    for i in 0..40 {
        send(&mut tab, &level_rebuild(i, 200_000)).await;
    }
    tab.close(None).await.unwrap();
    let left = Instant::now();
    // The rest are dropped: the slot is free once the one being applied is
    // done, not after all forty.
    while lab.stats.sessions() > 0 {
        assert!(
            left.elapsed() < Duration::from_secs(8),
            "the slot is still taken {:?} after the tab left",
            left.elapsed()
        );
        sleep(Duration::from_millis(20)).await;
    }
    let mut next = lab.connect().await;
    assert_eq!(next_text(&mut next).await["type"], "hello");
    lab.shut_down().await;
}

#[tokio::test]
async fn the_server_bounds_the_bodies_of_all_tabs() {
    // Each tab starts with 1,001 bodies (1,000 movers and the player).
    let lab = Lab::start(Options {
        max_bodies: 30_000,
        ..Options::default()
    })
    .await;
    let mut a = lab.connect().await;
    next_text(&mut a).await;
    let mut b = lab.connect().await;
    next_text(&mut b).await;
    assert_eq!(lab.stats.bodies(), 2_002);

    // 20,000 uniform objects touch about 7,000 pairs, fewer than their
    // bodies: they weigh their bodies alone.
    send(&mut a, r#"{"type":"settings","count":20000}"#).await;
    assert_eq!(next_text(&mut a).await["type"], "settings");
    assert_eq!(lab.stats.bodies(), 21_002);

    // A crowd's pairs weigh too: 2,000 mixed objects at size 3 are expected
    // to touch 57,700 pairs, 55,699 past their 2,001 bodies, which weigh as
    // 2,785 more (20 pairs a body).
    send(
        &mut b,
        r#"{"type":"settings","count":2000,"scene":"mixed","size":3}"#,
    )
    .await;
    assert_eq!(next_text(&mut b).await["type"], "settings");
    assert_eq!(lab.stats.bodies(), 20_001 + 4_786);
    // The pairs alone can pass the bound: at size 6 the same 2,000 objects
    // would weigh 13,426 (230,500 pairs), where their bodies fit. And
    // shrinking only the size gives weight back: at size 1, 2,226.
    send(&mut b, r#"{"type":"settings","size":6}"#).await;
    let reply = next_text(&mut b).await;
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .starts_with("server full: 13,426 bodies asked for; the other tabs hold 20,001"),
        "{reply}"
    );
    send(&mut b, r#"{"type":"settings","size":1}"#).await;
    assert_eq!(next_text(&mut b).await["type"], "settings");
    assert_eq!(lab.stats.bodies(), 20_001 + 2_226);

    // B's growth would pass the bound: refused, and B goes on as it was.
    // 10,000 mixed objects at size 1: 32,500 pairs, 22,499 past the bodies.
    send(&mut b, r#"{"type":"settings","count":10000,"size":1}"#).await;
    let reply = next_text(&mut b).await;
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(
        reply["message"],
        "server full: 11,126 bodies asked for; the other tabs hold 20,001 of 30,000 \
         (--max-bodies). That is 10,001 bodies, and 1,125 more for the pairs they would touch \
         (about 32,500)"
    );
    assert_eq!(lab.stats.bodies(), 22_227);
    let frame = next_frame(&mut b).await;
    assert_eq!(frame.header.count, 2_000);
    // An invalid change is refused for what is wrong with it, not for room.
    send(
        &mut b,
        r#"{"type":"settings","count":100000,"broad_phase":"brute_force"}"#,
    )
    .await;
    let reply = next_text(&mut b).await;
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .starts_with("brute force is limited"),
        "{reply}"
    );
    // The level's tiles count: 10 movers and 9,988 tiles fit, 9,990 do not.
    let level =
        |tiles: u32| format!(r#"{{"type":"settings","scene":"level","count":10,"tiles":{tiles}}}"#);
    send(&mut b, &level(9_990)).await;
    assert_eq!(next_text(&mut b).await["type"], "error");
    send(&mut b, &level(9_988)).await;
    assert_eq!(next_text(&mut b).await["type"], "settings");
    assert_eq!(lab.stats.bodies(), 30_000);

    // A third tab finds no room: refused at once, with the figures.
    let closed = refused(lab.addr).await;
    assert_eq!(u16::from(closed.code), protocol::SERVER_FULL);
    assert_eq!(
        closed.reason.as_str(),
        "server full: 1,001 bodies asked for; the other tabs hold 30,000 of 30,000 \
         (--max-bodies)"
    );
    lab.wait_sessions(|n| n == 2).await;
    assert_eq!(lab.stats.bodies(), 30_000);

    // A shrinks, which makes room; then A leaves, which frees the rest.
    send(&mut a, r#"{"type":"settings","count":10}"#).await;
    assert_eq!(next_text(&mut a).await["type"], "settings");
    assert_eq!(lab.stats.bodies(), 10_010);
    let mut c = lab.connect().await;
    assert_eq!(next_text(&mut c).await["type"], "hello");
    assert_eq!(lab.stats.bodies(), 11_011);
    a.close(None).await.unwrap();
    lab.wait_sessions(|n| n == 2).await;
    assert_eq!(lab.stats.bodies(), 11_000);
    drop((b, c));
    lab.wait_sessions(|n| n == 0).await;
    assert_eq!(lab.stats.bodies(), 0);
    lab.shut_down().await;
}

/// The first message a new tab gets: `Ok(type)` of the first text, or
/// `Err(code)` of the close frame that refused it.
async fn first_word(mut socket: Socket) -> (Socket, Result<String, u16>) {
    loop {
        match timeout(WAIT, socket.next()).await.unwrap() {
            Some(Ok(Message::Text(text))) => {
                let value: Value = serde_json::from_str(&text).unwrap();
                let kind = value["type"].as_str().unwrap().to_owned();
                return (socket, Ok(kind));
            }
            Some(Ok(Message::Close(Some(frame)))) => {
                return (socket, Err(u16::from(frame.code)));
            }
            Some(Ok(_)) => {}
            other => panic!("neither a message nor a close frame: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tabs_racing_for_the_last_room_never_pass_the_bound() {
    // Room for five tabs of 1,001 bodies, and 500 more.
    let lab = Lab::start(Options {
        max_bodies: 5 * 1_001 + 500,
        ..Options::default()
    })
    .await;
    let url = format!("ws://{}/ws", lab.addr);
    for round in 0..5 {
        // Twenty tabs at once: five get in, whatever the order.
        let tabs = (0..20).map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let (socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
                first_word(socket).await
            })
        });
        let mut admitted = Vec::new();
        let mut refused = 0;
        for tab in futures_util::future::join_all(tabs).await {
            match tab.unwrap() {
                (socket, Ok(kind)) => {
                    assert_eq!(kind, "hello");
                    admitted.push(Client::from(socket));
                }
                (_, Err(code)) => {
                    assert_eq!(code, protocol::SERVER_FULL);
                    refused += 1;
                }
            }
        }
        assert_eq!((admitted.len(), refused), (5, 15), "round {round}");
        lab.wait_sessions(|n| n == 5).await;
        assert_eq!(lab.stats.bodies(), 5_005, "round {round}");

        // All five grow by 400 at once, each on its own simulation
        // thread: the room left takes one.
        let grow = admitted.into_iter().map(|mut tab| {
            tokio::spawn(async move {
                send(&mut tab, r#"{"type":"settings","count":1400}"#).await;
                let reply = next_text(&mut tab).await;
                (tab, reply["type"].as_str().unwrap().to_owned())
            })
        });
        let mut grown = 0;
        let mut tabs = Vec::new();
        for tab in futures_util::future::join_all(grow).await {
            let (tab, kind) = tab.unwrap();
            match kind.as_str() {
                "settings" => grown += 1,
                "error" => {}
                other => panic!("{other}"),
            }
            tabs.push(tab);
        }
        assert_eq!(grown, 1, "round {round}");
        assert_eq!(lab.stats.bodies(), 5_405, "round {round}");
        drop(tabs);
        lab.wait_sessions(|n| n == 0).await;
        assert_eq!(lab.stats.bodies(), 0, "round {round}");
    }
    lab.shut_down().await;
}

#[tokio::test]
async fn a_refusal_with_long_figures_still_fits_its_close_frame() {
    // A close frame's payload is at most 125 bytes, two of them the code.
    // The refusal's old wording made 127 bytes of reason at these figures
    // (129 at the default bound's); the cut itself is tested in
    // `serve::tests::close_reasons_are_cut_to_fit_the_frame`.
    let lab = Lab::start(Options {
        max_bodies: 200_001,
        settings: Settings {
            count: 100_000,
            ..Settings::default()
        },
        ..Options::default()
    })
    .await;
    let mut a = lab.connect().await;
    assert_eq!(next_text(&mut a).await["type"], "hello");
    let mut tcp = raw_upgrade(lab.addr).await;
    let bytes = read_rest(&mut tcp).await;
    let frames = server_frames(&bytes);
    let (opcode, payload) = frames.last().expect("no frames");
    assert_eq!(*opcode, 0x8, "{frames:?}");
    assert!(
        payload.len() <= 125,
        "a close payload of {} bytes",
        payload.len()
    );
    let (code, reason) = last_close(&bytes);
    assert_eq!(code, protocol::SERVER_FULL);
    assert_eq!(
        reason,
        "server full: 100,001 bodies asked for; the other tabs hold 100,001 of 200,001 \
         (--max-bodies)"
    );
    drop(a);
    lab.shut_down().await;
}

#[tokio::test]
async fn a_bound_below_one_tab_is_refused_at_start() {
    // A bound no tab fits in, and starting settings no tab could start
    // with, are refused before binding.
    let refusals = [
        (
            Options {
                max_bodies: 1_000,
                ..Options::default()
            },
            "--max-bodies 1,000 is below the 1,001 bodies a tab starts with",
        ),
        (
            Options {
                settings: Settings {
                    count: 5,
                    ..Settings::default()
                },
                ..Options::default()
            },
            "the settings a tab starts with are invalid: count must be between 10 and 100,000 (got 5)",
        ),
    ];
    for (options, why) in refusals {
        let refused = Server::bind(Options { port: 0, ..options })
            .await
            .expect_err(why);
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(refused.to_string(), why);
    }
    let lab = Lab::start(Options {
        max_bodies: 1_001,
        ..Options::default()
    })
    .await;
    let mut tab = lab.connect().await;
    assert_eq!(next_text(&mut tab).await["type"], "hello");
    lab.shut_down().await;
}

// ----- dead and hostile clients -----

/// A slowloris client: sends a request head a byte at a time and never
/// finishes it. Returns how long the server kept the connection open, or
/// `None` if it still was after [`WAIT`].
async fn slowloris(addr: SocketAddr) -> Option<Duration> {
    let opened = Instant::now();
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let mut trickle = interval(Duration::from_millis(200));
    let mut head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        .iter()
        .copied();
    let mut buf = [0; 1024];
    while opened.elapsed() < WAIT {
        tokio::select! {
            read = tcp.read(&mut buf) => match read {
                Ok(0) | Err(_) => return Some(opened.elapsed()),
                Ok(_) => {}
            },
            _ = trickle.tick() => {
                let byte = head.next().unwrap_or(b'x');
                if tcp.write_all(&[byte]).await.is_err() {
                    return Some(opened.elapsed());
                }
            }
        }
    }
    None
}

#[tokio::test]
async fn slow_request_heads_are_cut_off_and_the_page_still_loads() {
    const ATTACKERS: usize = 1_000;
    let header_timeout = Duration::from_secs(1);
    let cap = 100;
    let lab = Lab::start(Options {
        max_connections: cap,
        header_timeout,
        ..Options::default()
    })
    .await;
    let addr = lab.addr;
    // 1,000 connections over about three seconds, each trickling its head.
    let attack = tokio::spawn(async move {
        let mut clients = Vec::with_capacity(ATTACKERS);
        for _ in 0..ATTACKERS {
            clients.push(tokio::spawn(slowloris(addr)));
            sleep(Duration::from_millis(3)).await;
        }
        let mut kept = Vec::with_capacity(ATTACKERS);
        for client in clients {
            kept.push(client.await.unwrap());
        }
        kept
    });

    // The page loads all along, and the connections stay capped.
    let mut loads = 0;
    let mut most_open = 0;
    while !attack.is_finished() {
        let page = get(addr, "/", &addr.to_string()).await;
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        loads += 1;
        most_open = most_open.max(lab.stats.connections());
        sleep(Duration::from_millis(100)).await;
    }
    assert!(
        loads >= 20,
        "the page loaded {loads} times during the attack"
    );
    assert!(most_open <= cap + 10, "{most_open} connections open");

    // Every slow connection was closed within the head timeout (the oldest
    // ones sooner, to make room for new ones).
    let kept = attack.await.unwrap();
    let slack = Duration::from_secs(2);
    let longest = kept
        .iter()
        .map(|kept| kept.expect("a slow connection was never closed"))
        .max()
        .unwrap();
    assert!(
        longest <= header_timeout + slack,
        "one was kept {longest:?}"
    );
    assert!(longest >= header_timeout.mul_f32(0.9), "{longest:?}");
    lab.wait_connections_closed().await;
    assert!(
        get(addr, "/", &addr.to_string())
            .await
            .starts_with("HTTP/1.1 200")
    );
    lab.shut_down().await;
}

/// A WebSocket client by hand: sends the upgrade request on a raw TCP
/// socket and reads the response head (only that), so the test decides what
/// the client sends, reads and answers from then on.
async fn raw_upgrade(addr: SocketAddr) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0];
        timeout(WAIT, tcp.read_exact(&mut byte))
            .await
            .unwrap()
            .unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    tcp
}

/// A final frame from a client: `opcode` and `payload`, masked with `mask`,
/// or unmasked (which the protocol forbids) with `None`.
fn client_frame(opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = vec![0x80 | opcode];
    let masked = if mask.is_some() { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => out.push(masked | n as u8),
        n => {
            out.push(masked | 126);
            out.extend_from_slice(&u16::try_from(n).unwrap().to_be_bytes());
        }
    }
    match mask {
        Some(mask) => {
            out.extend_from_slice(&mask);
            out.extend(payload.iter().zip(mask.iter().cycle()).map(|(b, m)| b ^ m));
        }
        None => out.extend_from_slice(payload),
    }
    out
}

/// The frames a server sent, as (opcode, payload), from the bytes a raw
/// client read; a frame cut off at the end is left out.
fn server_frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while bytes.len() >= 2 {
        let (opcode, short) = (bytes[0] & 0x0f, usize::from(bytes[1] & 0x7f));
        assert_eq!(bytes[1] & 0x80, 0, "a server frame is never masked");
        let (len, at) = match short {
            126 => (usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), 4),
            127 => (
                usize::try_from(u64::from_be_bytes(bytes[2..10].try_into().unwrap())).unwrap(),
                10,
            ),
            n => (n, 2),
        };
        if bytes.len() < at + len {
            break;
        }
        frames.push((opcode, bytes[at..at + len].to_vec()));
        bytes = &bytes[at + len..];
    }
    frames
}

/// The close frame a server ended with, as (code, reason), from the bytes a
/// raw client read.
fn last_close(bytes: &[u8]) -> (u16, String) {
    let frames = server_frames(bytes);
    let (opcode, payload) = frames.last().expect("no frames");
    assert_eq!(*opcode, 0x8, "the last frame is not a close frame");
    (
        u16::from_be_bytes([payload[0], payload[1]]),
        String::from_utf8(payload[2..].to_vec()).unwrap(),
    )
}

/// Everything a raw client can still read, until the server closes.
async fn read_rest(tcp: &mut TcpStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    // A reset after the data still leaves the data read.
    let _ = timeout(WAIT, tcp.read_to_end(&mut bytes))
        .await
        .expect("the server did not close");
    bytes
}

/// The close frame the server sends, skipping what comes before it.
async fn close_frame(socket: &mut Socket) -> CloseFrame {
    loop {
        match timeout(WAIT, socket.next()).await.unwrap() {
            Some(Ok(Message::Close(Some(frame)))) => return frame,
            Some(Ok(Message::Close(None))) => panic!("a close frame without a code"),
            Some(Ok(_)) => {}
            other => panic!("no close frame: {other:?}"),
        }
    }
}

/// Connects a tab that must be refused, and returns the close frame that
/// says why.
async fn refused(addr: SocketAddr) -> CloseFrame {
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .unwrap();
    close_frame(&mut socket).await
}

const PAUSE: &[u8] = br#"{"type":"pause","paused":true}"#;

/// Fills every session slot with dead tabs (each pauses its simulation,
/// then neither reads nor answers anything, like a paused tab whose network
/// went away), checks that a new tab is refused, then that one gets in
/// within `deadline`. Returns how long that took, from when every slot was
/// taken.
async fn dead_tabs_make_way(options: Options, deadline: Duration) -> Duration {
    let (max, idle) = (options.max_sessions, options.idle_timeout);
    let lab = Lab::start(options).await;
    let first = Instant::now();
    let mut dead = Vec::new();
    for i in 0..max {
        let mut tcp = raw_upgrade(lab.addr).await;
        let mask = (i as u32).to_le_bytes();
        tcp.write_all(&client_frame(0x1, PAUSE, Some(mask)))
            .await
            .unwrap();
        dead.push(tcp);
    }
    let since = Instant::now();
    lab.wait_sessions(|n| n == max).await;
    let url = format!("ws://{}/ws", lab.addr);
    let closed = refused(lab.addr).await;
    assert_eq!(u16::from(closed.code), protocol::TOO_MANY_TABS);

    let mut tab: Client = loop {
        let (mut socket, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        match timeout(WAIT, socket.next()).await.unwrap() {
            Some(Ok(Message::Text(_))) => break socket.into(),
            Some(Ok(Message::Close(Some(frame)))) => {
                assert_eq!(u16::from(frame.code), protocol::TOO_MANY_TABS);
            }
            other => panic!("neither admitted nor refused: {other:?}"),
        }
        assert!(
            since.elapsed() < deadline,
            "no new tab admitted in {deadline:?}: {} sessions",
            lab.stats.sessions()
        );
        sleep(Duration::from_millis(100)).await;
    };
    let took = since.elapsed();
    // Not before the first dead tab had been silent for the idle timeout.
    assert!(
        first.elapsed() >= idle,
        "admitted after {:?}",
        first.elapsed()
    );
    next_frame(&mut tab).await;

    // The dead tabs were pinged, then told why they were closed.
    lab.wait_sessions(|n| n == 1).await;
    for tcp in dead.iter_mut().take(3) {
        let bytes = read_rest(tcp).await;
        assert!(
            server_frames(&bytes)
                .iter()
                .any(|(opcode, _)| *opcode == 0x9)
        );
        let (code, reason) = last_close(&bytes);
        assert_eq!(code, 4408, "{reason}");
        assert!(reason.contains("timed out"), "{reason}");
    }
    lab.shut_down().await;
    took
}

#[tokio::test]
async fn dead_tabs_are_closed_and_free_their_slots() {
    let options = Options {
        ping_interval: Duration::from_millis(200),
        idle_timeout: Duration::from_secs(1),
        settings: Settings {
            count: 100,
            ..Settings::default()
        },
        ..Options::default()
    };
    assert_eq!(options.max_sessions, 64);
    dead_tabs_make_way(options, Duration::from_secs(6)).await;
}

/// The same at the real timeouts: about half a minute. Run by hand:
/// `cargo test -p quadrat-lab --test server -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "takes half a minute"]
async fn dead_tabs_make_way_at_the_default_timeouts() {
    let took = dead_tabs_make_way(Options::default(), Duration::from_secs(60)).await;
    println!("a new tab got in {took:.1?} after 64 dead tabs took every slot");
}

#[tokio::test]
async fn a_quiet_tab_that_answers_pings_stays() {
    let lab = Lab::start(Options {
        ping_interval: Duration::from_millis(100),
        idle_timeout: Duration::from_millis(500),
        ..Options::default()
    })
    .await;
    let mut socket = lab.connect().await;
    next_text(&mut socket).await;
    send(&mut socket, std::str::from_utf8(PAUSE).unwrap()).await;
    // Paused, the page sends nothing; reading answers the pings.
    let mut pings = 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        match timeout(WAIT, socket.next()).await.unwrap() {
            Some(Ok(Message::Ping(_))) => pings += 1,
            Some(Ok(Message::Binary(bytes))) => {
                socket.decoder.decode(&bytes).unwrap();
            }
            Some(Ok(Message::Text(_) | Message::Pong(_))) => {}
            other => panic!("the session ended: {other:?}"),
        }
    }
    assert!(pings >= 10, "{pings} pings in 2 s");
    assert_eq!(lab.stats.sessions(), 1);
    send(&mut socket, r#"{"type":"step"}"#).await;
    next_frame(&mut socket).await;
    lab.shut_down().await;
}

#[tokio::test]
async fn protocol_violations_get_a_close_frame_that_says_why() {
    let lab = Lab::start(Options::default()).await;
    let text = |payload: &[u8], fin| {
        Message::Frame(WsFrame::message(
            payload.to_vec(),
            OpCode::Data(Data::Text),
            fin,
        ))
    };
    let cases: [(&str, Vec<Message>, u16); 5] = [
        (
            "a message over 4 KiB",
            vec![Message::text("x".repeat(10_000))],
            1009,
        ),
        (
            "a message over 4 KiB in small frames",
            vec![
                text(&[b' '; 3_000], false),
                Message::Frame(WsFrame::message(
                    vec![b' '; 3_000],
                    OpCode::Data(Data::Continue),
                    true,
                )),
            ],
            1009,
        ),
        (
            "text that is not UTF-8",
            vec![text(&[b'"', 0xff, 0xfe, b'"'], true)],
            1007,
        ),
        (
            "a reserved opcode",
            vec![Message::Frame(WsFrame::message(
                b"{}".to_vec(),
                OpCode::Data(Data::Reserved(3)),
                true,
            ))],
            1002,
        ),
        (
            "a continuation without a start",
            vec![Message::Frame(WsFrame::message(
                b"{}".to_vec(),
                OpCode::Data(Data::Continue),
                true,
            ))],
            1002,
        ),
    ];
    for (what, messages, code) in cases {
        let mut socket = lab.connect().await;
        next_text(&mut socket).await;
        for message in messages {
            socket.send(message).await.unwrap();
        }
        let close = close_frame(&mut socket).await;
        assert_eq!(u16::from(close.code), code, "{what}: {close:?}");
        assert!(!close.reason.is_empty(), "{what}");
    }

    // An unmasked frame, which only a server may send.
    let mut tcp = raw_upgrade(lab.addr).await;
    tcp.write_all(&client_frame(0x1, PAUSE, None))
        .await
        .unwrap();
    let (code, reason) = last_close(&read_rest(&mut tcp).await);
    assert_eq!(code, 1002, "{reason}");

    // Each ended only its own session.
    lab.wait_sessions(|n| n == 0).await;
    let mut socket = lab.connect().await;
    assert_eq!(next_text(&mut socket).await["type"], "hello");
    lab.shut_down().await;
}

#[tokio::test]
async fn a_close_frame_from_the_page_is_answered() {
    let lab = Lab::start(Options::default()).await;
    let mut socket = lab.connect().await;
    next_frame(&mut socket).await;
    socket
        .close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "bye".into(),
        }))
        .await
        .unwrap();
    let answer = close_frame(&mut socket).await;
    assert_eq!(answer.code, CloseCode::Normal);
    // Then the server closes the connection.
    assert!(timeout(WAIT, socket.next()).await.unwrap().is_none());
    lab.wait_sessions(|n| n == 0).await;
    lab.shut_down().await;
}
