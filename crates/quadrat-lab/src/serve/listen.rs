//! Accepting connections: HTTP/1 with a deadline on request heads and a cap
//! on the connections open at once.
//!
//! - **Heads have a deadline.** A connection must send a complete request
//!   head within [`Options::header_timeout`] of opening, and a kept-alive
//!   one within that long of its last response; otherwise it is closed. A
//!   client that trickles a head a byte at a time (slowloris) or opens a
//!   connection and says nothing holds it for that long, no longer.
//! - **Connections are capped.** At most [`Options::max_connections`] are
//!   open; a new one past the cap closes the oldest, so the newest client
//!   (a person opening the page) gets in even while the cap is full of
//!   stalled connections, and the server never runs out of file descriptors
//!   on their account. A connection that became a WebSocket leaves this
//!   count: sessions have their own cap, [`Options::max_sessions`].
//!
//! On shutdown the server stops accepting, lets requests in progress finish
//! and closes idle connections; whatever is still open when the grace period
//! ends is closed.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{Instant, sleep, timeout_at};

use super::{Options, Stats};

/// How long accepting pauses after an error that is not one connection's
/// (out of file descriptors, say), rather than spinning on it.
const ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Serves `app` on `listener` until `shutdown` completes, then waits up to
/// `grace` for open connections to finish and closes the rest. Returns the
/// end of the grace period.
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    options: &Options,
    stats: Arc<Stats>,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> Instant {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    let (closing, closing_rx) = watch::channel(false);
    // Dropped by each connection's task when it ends; `recv` returns `None`
    // once all of them have.
    let (open, mut all_closed) = mpsc::channel::<()>(1);
    let mut connections = Oldest::default();
    let mut shutdown = pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) if is_one_connections(&e) => continue,
                Err(e) => {
                    eprintln!("quadrat lab: cannot accept a connection: {e}");
                    sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        if stats.connections() >= options.max_connections {
            connections.close_oldest();
        }
        let evicted = connections.push(options.max_connections);
        let task = Connection {
            stats: Arc::clone(&stats),
            _open: open.clone(),
        };
        tokio::spawn(task.run(tcp, &http, app.clone(), evicted, closing_rx.clone()));
    }
    let deadline = Instant::now() + grace;
    drop(listener);
    drop(open);
    let _ = closing.send(true);
    if timeout_at(deadline, all_closed.recv()).await.is_err() {
        connections.close_all();
        let _ = all_closed.recv().await;
    }
    deadline
}

/// An error of one connection (it was reset before it was accepted), after
/// which accepting goes on at once.
fn is_one_connections(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

/// One HTTP connection's place in [`Stats::connections`], given back when
/// its task ends.
struct Connection {
    stats: Arc<Stats>,
    /// Never used to send: shutting down waits until every clone is gone.
    _open: mpsc::Sender<()>,
}

impl Connection {
    /// Counts the connection in and returns its task: serve `tcp` until it
    /// closes, is evicted (closed at once) or the server shuts down (requests
    /// in progress finish, an idle connection closes).
    fn run(
        self,
        tcp: TcpStream,
        http: &http1::Builder,
        app: Router,
        evicted: oneshot::Receiver<()>,
        mut closing: watch::Receiver<bool>,
    ) -> impl Future<Output = ()> + Send + 'static {
        self.stats.connections.fetch_add(1, Ordering::AcqRel);
        let conn = http
            .serve_connection(TokioIo::new(tcp), TowerToHyperService::new(app))
            .with_upgrades();
        // Only an eviction closes at once; the queue being dropped does not.
        let evicted = async move {
            if evicted.await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        let closing = async move {
            let _ = closing.wait_for(|closing| *closing).await;
        };
        async move {
            let mut conn = pin!(conn);
            let mut evicted = pin!(evicted);
            tokio::select! {
                // Errors (a head too slow or malformed, a reset) end only
                // this connection, and hyper has answered what it could.
                _ = conn.as_mut() => {}
                () = evicted.as_mut() => {}
                () = closing => {
                    conn.as_mut().graceful_shutdown();
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        () = evicted.as_mut() => {}
                    }
                }
            }
            drop(self);
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stats.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The open connections, oldest first, each by the sender that closes it.
/// A connection that has ended leaves a closed sender behind, skipped and
/// pruned as the queue goes.
#[derive(Default)]
struct Oldest(VecDeque<oneshot::Sender<()>>);

impl Oldest {
    /// Adds a connection; returns what tells it to close.
    fn push(&mut self, cap: usize) -> oneshot::Receiver<()> {
        if self.0.len() > cap.saturating_mul(2) {
            self.0.retain(|close| !close.is_closed());
        }
        let (close, closed) = oneshot::channel();
        self.0.push_back(close);
        closed
    }

    /// Closes the oldest connection still open.
    fn close_oldest(&mut self) {
        while let Some(close) = self.0.pop_front() {
            if close.send(()).is_ok() {
                return;
            }
        }
    }

    /// Closes every connection still open.
    fn close_all(&mut self) {
        for close in self.0.drain(..) {
            let _ = close.send(());
        }
    }
}
