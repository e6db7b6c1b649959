//! The lab's server, started on an ephemeral port inside the test, with
//! real WebSocket clients: replies to good and bad messages, frames that
//! keep coming, many clients at once, a client that stops reading, limits,
//! and a clean shutdown. Then hostile clients: request heads trickled a
//! byte at a time.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use quadrat_lab::serve::frame::{self, Frame, Header};
use quadrat_lab::serve::{Options, Server, Stats};
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
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

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

    async fn connect(&self) -> Socket {
        let (socket, _) = tokio_tungstenite::connect_async(format!("ws://{}/ws", self.addr))
            .await
            .unwrap();
        socket
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

/// The next JSON text message, skipping frames.
async fn next_text(socket: &mut Socket) -> Value {
    loop {
        match timeout(WAIT, socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
            Message::Binary(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The next frame, skipping text messages.
async fn next_frame(socket: &mut Socket) -> Frame {
    loop {
        match timeout(WAIT, socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            Message::Binary(bytes) => return frame::decode(&bytes).unwrap(),
            Message::Text(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The next frame that satisfies `ok`.
async fn frame_where(socket: &mut Socket, ok: impl Fn(&Frame) -> bool) -> Frame {
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
    let lab = Lab::start(Options {
        stall_timeout: Duration::from_secs(1),
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

    // The slow client sees gaps: frames were dropped, not queued. On a busy
    // machine the socket buffers may still hold frames from before the
    // drops, so it reads on, slowly, until it gets past them.
    let mut seen: Vec<Header> = Vec::new();
    let start = Instant::now();
    loop {
        seen.push(next_frame(&mut slow).await.header);
        let gap = seen.windows(2).any(|w| w[1].frame > w[0].frame + 1);
        if gap && seen.last().unwrap().dropped > 0 {
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
    let err = tokio_tungstenite::connect_async(request).await.unwrap_err();
    assert!(err.to_string().contains("403"), "{err}");

    let mut same = format!("ws://{}/ws", lab.addr)
        .into_client_request()
        .unwrap();
    let origin = HeaderValue::from_str(&format!("http://{}", lab.addr)).unwrap();
    same.headers_mut().insert("origin", origin);
    let (_first, _) = tokio_tungstenite::connect_async(same).await.unwrap();
    let _second = lab.connect().await;
    lab.wait_sessions(|n| n == 2).await;
    let err = tokio_tungstenite::connect_async(format!("ws://{}/ws", lab.addr))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("503"), "{err}");
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

// ----- hostile clients -----

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
