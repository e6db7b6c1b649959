//! `quadrat-lab serve` (the default command): the lab's web page, with one
//! live simulation per browser tab.
//!
//! The page (HTML, JavaScript and CSS embedded in the binary) opens a
//! WebSocket to `/ws`. The server then runs a [`Simulation`](crate::sim::Simulation)
//! for that tab on a thread of its own and streams compact binary
//! [frames](frame) to it; the page sends its settings and input back as
//! small JSON [messages](protocol).
//!
//! The server binds to 127.0.0.1 unless told otherwise, checks every
//! message, drops frames for a page that reads slowly rather than queueing
//! them, and shuts down cleanly on Ctrl-C. It holds nothing for a client
//! that has gone quiet, so dead or hostile connections cannot lock the
//! page out:
//!
//! - a connection must send its request head within
//!   [`Options::header_timeout`], and at most [`Options::max_connections`]
//!   are open at once (a new one closes the oldest);
//! - each session is pinged every [`Options::ping_interval`] and closed when
//!   nothing, not even a Pong, has come from its page for
//!   [`Options::idle_timeout`], which frees its slot for a new tab (a tab
//!   behind a dead network, or a closed laptop, would otherwise hold it);
//! - a session whose page stops reading is ended after
//!   [`Options::stall_timeout`];
//! - the bodies of all sessions together (movers, players and tiles, and
//!   the pairs a crowd of them touches, which the memory grows with) are
//!   bounded by [`Options::max_bodies`]: a new tab that would pass the
//!   bound is refused, and so is a change of settings that would, with an
//!   `error` that says how many are in use (the session goes on as it was);
//! - a page that breaks the WebSocket protocol gets a close frame that says
//!   why (the codes are listed in [`protocol`]), and a page's own close
//!   frame is answered.
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! use quadrat_lab::serve::{Options, Server};
//! let server = Server::bind(Options { port: 0, ..Options::default() }).await?;
//! println!("open {}", server.url());
//! server.serve(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

pub mod frame;
mod listen;
pub mod protocol;
mod routes;
mod session;

use core::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::ws::CloseFrame;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::time::timeout_at;

use crate::sim::Settings;

/// How long shutting down waits for open connections, then for open
/// sessions, to close.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How long [`run`] waits, once the server has returned, for the tasks it
/// leaves behind (a simulation thread still busy after the grace, inside a
/// long change of settings, is among them) before it exits without them.
const EXIT_WAIT: Duration = Duration::from_millis(200);

/// Command-line arguments of `quadrat-lab serve`.
#[derive(Clone, Debug, clap::Args)]
pub struct Args {
    /// Address to listen on. The default serves only this machine; give
    /// 0.0.0.0 (or another address) to let other machines in, deliberately.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Port to listen on; 0 picks a free one (the URL printed says which).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The most browser tabs served at once.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_sessions: u32,
    /// The most bodies (movers, players and tiles) of all tabs together,
    /// the pairs a crowd touches counted too: past one a body, 20 touching
    /// pairs of the object scenes weigh as one body, 2 of the level. Each
    /// takes at most about 480 bytes with the tree's default settings (the
    /// largest level, 1.1 million bodies and 2 million pairs, weighs 1.72
    /// million and peaks at 770 to 820 MB with its frames), and up to about
    /// 640 with a split threshold of 1 and a depth of 24: the default holds
    /// the tabs to about 2 GB, and 2.6 GB at worst.
    #[arg(long, default_value_t = 4_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_bodies: u64,
    /// Open the page in the default browser once the server listens (the
    /// `BROWSER` environment variable, where set, names the browser).
    #[arg(long)]
    pub open: bool,
}

impl Default for Args {
    fn default() -> Args {
        let options = Options::default();
        Args {
            host: options.host,
            port: options.port,
            max_sessions: options.max_sessions as u32,
            max_bodies: options.max_bodies,
            open: false,
        }
    }
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Address to listen on.
    pub host: IpAddr,
    /// Port; 0 picks a free one.
    pub port: u16,
    /// The most sessions (tabs) at once; more are refused (close code
    /// [`protocol::TOO_MANY_TABS`]).
    pub max_sessions: usize,
    /// The most bodies of all sessions together, the pairs their crowds
    /// touch counted by what they take in memory ([`Settings::weight`]): a
    /// new tab whose starting settings would pass it is refused (close code
    /// [`protocol::SERVER_FULL`]), and so is a change of settings, with an
    /// `error`. Default 4,000,000, about 2.6 GB at most (see
    /// [`Args::max_bodies`]); each tab's crowding is bounded by
    /// [`Settings::validate`].
    pub max_bodies: u64,
    /// The most HTTP connections open at once (a connection that became a
    /// session's WebSocket no longer counts). A new connection past the cap
    /// closes the oldest open one. Default 256.
    pub max_connections: usize,
    /// A connection that has not sent a complete request head this long
    /// after opening (or after its last response, when kept alive) is
    /// closed. Default 10 s.
    pub header_timeout: Duration,
    /// A page that does not take a message for this long is disconnected.
    /// Default 10 s.
    pub stall_timeout: Duration,
    /// How often each session pings its page. Browsers answer pings by
    /// themselves, paused or in a background tab too. Default 10 s; keep it
    /// well below `idle_timeout`.
    pub ping_interval: Duration,
    /// A session that hears nothing from its page (no message, no Pong)
    /// for this long is closed, with close code 4408, and its slot freed.
    /// Default 30 s: three pings unanswered.
    pub idle_timeout: Duration,
    /// Settings each new session starts with.
    pub settings: Settings,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            max_sessions: 64,
            max_bodies: 4_000_000,
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            stall_timeout: Duration::from_secs(10),
            ping_interval: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            settings: Settings::default(),
        }
    }
}

impl Options {
    /// Refuses settings a tab cannot start with ([`Settings::validate`]),
    /// and a `max_bodies` below their weight ([`Settings::weight`]), which
    /// would refuse every tab.
    pub fn check(&self) -> Result<(), String> {
        self.settings
            .validate()
            .map_err(|why| format!("the settings a tab starts with are invalid: {why}"))?;
        let first = self.settings.weight();
        if self.max_bodies < first {
            return Err(format!(
                "--max-bodies {} is below the {} bodies a tab starts with",
                crate::sim::thousands(self.max_bodies),
                crate::sim::thousands(first)
            ));
        }
        Ok(())
    }
}

impl From<&Args> for Options {
    fn from(args: &Args) -> Options {
        Options {
            host: args.host,
            port: args.port,
            max_sessions: args.max_sessions as usize,
            max_bodies: args.max_bodies,
            ..Options::default()
        }
    }
}

/// Counters of a running server.
#[derive(Debug, Default)]
pub struct Stats {
    sessions: AtomicUsize,
    started: AtomicU64,
    connections: AtomicUsize,
    bodies: AtomicU64,
}

impl Stats {
    /// Sessions open now (a session counts until its simulation thread has
    /// stopped).
    #[must_use]
    pub fn sessions(&self) -> usize {
        self.sessions.load(Ordering::Acquire)
    }

    /// Sessions started since the server started.
    #[must_use]
    pub fn sessions_started(&self) -> u64 {
        self.started.load(Ordering::Acquire)
    }

    /// Bodies the open sessions hold now, all together, their pairs counted
    /// too (see [`Options::max_bodies`]).
    #[must_use]
    pub fn bodies(&self) -> u64 {
        self.bodies.load(Ordering::Acquire)
    }

    /// HTTP connections open now, sessions' WebSockets not included.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Acquire)
    }
}

/// What the handlers and sessions share.
#[derive(Debug)]
struct State {
    options: Options,
    /// The address the server listens on.
    local: SocketAddr,
    stats: Arc<Stats>,
    /// Turns `true` when the server shuts down.
    shutdown: watch::Receiver<bool>,
    /// Never used to send: each session's [`Slot`] holds a clone, and
    /// shutting down waits until the last one is dropped.
    alive: mpsc::Sender<()>,
}

/// A session's place in [`Stats::sessions`], given back on drop. Its
/// sender closes only after the count is given back, so a shutdown that
/// waits for all senders sees every session counted out.
#[derive(Debug)]
struct Slot {
    stats: Arc<Stats>,
    _alive: mpsc::Sender<()>,
}

/// Why a new session was not admitted.
#[derive(Debug)]
enum Full {
    /// Every slot is taken.
    Sessions,
    /// The starting settings' weight would pass [`Options::max_bodies`].
    Bodies(BodiesFull),
}

impl State {
    /// Takes a session slot and the bodies of the starting settings.
    fn admit(&self) -> Result<(Slot, Bodies), Full> {
        let open = self.stats.sessions.fetch_add(1, Ordering::AcqRel);
        if open >= self.options.max_sessions {
            self.stats.sessions.fetch_sub(1, Ordering::AcqRel);
            return Err(Full::Sessions);
        }
        let slot = Slot {
            stats: Arc::clone(&self.stats),
            _alive: self.alive.clone(),
        };
        let mut bodies = Bodies {
            stats: Arc::clone(&self.stats),
            max: self.options.max_bodies,
            held: 0,
        };
        bodies
            .reserve(&self.options.settings)
            .map_err(Full::Bodies)?;
        self.stats.started.fetch_add(1, Ordering::AcqRel);
        Ok((slot, bodies))
    }
}

/// The longest reason a close frame can carry: its payload is at most 125
/// bytes, two of them the code.
const MAX_REASON: usize = 123;

/// A close frame with `code` and `reason`, the reason cut to
/// [`MAX_REASON`] bytes (at a character's boundary): a longer control frame
/// breaks the protocol, and the page would learn nothing of why.
fn close_frame(code: u16, mut reason: String) -> CloseFrame {
    if reason.len() > MAX_REASON {
        let mut end = MAX_REASON;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// A session's share of [`Stats::bodies`], given back on drop.
#[derive(Debug)]
struct Bodies {
    stats: Arc<Stats>,
    max: u64,
    held: u64,
}

/// A reservation refused: what was asked (the weight, and the bodies and
/// pairs it counts), what the other sessions hold, and the bound.
#[derive(Clone, Copy, Debug, PartialEq)]
struct BodiesFull {
    wanted: u64,
    bodies: u64,
    pairs: u64,
    others: u64,
    max: u64,
}

impl BodiesFull {
    /// The figures in one sentence, short enough for a close frame's reason
    /// (at most 123 bytes) with figures of up to ten digits.
    fn reason(&self) -> String {
        use crate::sim::thousands;
        format!(
            "server full: {} bodies asked for; the other tabs hold {} of {} (--max-bodies)",
            thousands(self.wanted),
            thousands(self.others),
            thousands(self.max)
        )
    }
}

/// [`BodiesFull::reason`], and where a crowd's pairs weigh too, how much
/// (for the `error` that refuses a change of settings).
impl fmt::Display for BodiesFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::sim::thousands;
        f.write_str(&self.reason())?;
        if self.wanted > self.bodies {
            write!(
                f,
                ". That is {} bodies, and {} more for the pairs they would touch (about {})",
                thousands(self.bodies),
                thousands(self.wanted - self.bodies),
                thousands(self.pairs)
            )?;
        }
        Ok(())
    }
}

impl Bodies {
    /// Holds the weight of `settings` ([`Settings::weight`]), or more if it
    /// holds more already: a change of settings holds the larger of the old
    /// and new weights while it is applied, then [`Bodies::release_to`] the
    /// new. Holds what it held when the others' and the new weight pass the
    /// bound.
    fn reserve(&mut self, settings: &Settings) -> Result<(), BodiesFull> {
        let at_least = settings.weight();
        let Some(more) = at_least.checked_sub(self.held).filter(|&m| m > 0) else {
            return Ok(());
        };
        let held = self.held;
        let max = self.max;
        self.stats
            .bodies
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |all| {
                let others = all - held;
                (others.saturating_add(at_least) <= max).then_some(all + more)
            })
            .map_err(|all| BodiesFull {
                wanted: at_least,
                bodies: settings.bodies(),
                pairs: settings.expected_pairs(),
                others: all - held,
                max,
            })?;
        self.held = at_least;
        Ok(())
    }

    /// Gives back all but `count` bodies (nothing when it holds fewer).
    fn release_to(&mut self, count: u64) {
        if let Some(less) = self.held.checked_sub(count).filter(|&l| l > 0) {
            self.stats.bodies.fetch_sub(less, Ordering::AcqRel);
            self.held = count;
        }
    }
}

impl Drop for Bodies {
    fn drop(&mut self) {
        self.release_to(0);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.stats.sessions.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A bound, not yet serving, lab server.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    options: Options,
    stats: Arc<Stats>,
}

impl Server {
    /// Binds to `options.host:options.port`. Refuses options that
    /// [`Options::check`] refuses (`InvalidInput`), before binding.
    pub async fn bind(options: Options) -> io::Result<Server> {
        options
            .check()
            .map_err(|message| io::Error::new(io::ErrorKind::InvalidInput, message))?;
        let listener = TcpListener::bind((options.host, options.port)).await?;
        Ok(Server {
            listener,
            options,
            stats: Arc::default(),
        })
    }

    /// The address the server listens on (with the port chosen, for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The page's URL. For a server on all interfaces, the loopback URL.
    #[must_use]
    pub fn url(&self) -> String {
        let addr = self
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::new(self.options.host, self.options.port));
        let ip = match addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        format!("http://{}/", SocketAddr::new(ip, addr.port()))
    }

    /// The server's counters, readable while it serves.
    #[must_use]
    pub fn stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    /// Serves until `shutdown` completes, then stops accepting, closes every
    /// session (each page gets a WebSocket close frame) and waits up to five
    /// seconds for open requests to finish and for the simulations to stop.
    /// It does not wait longer: a simulation still busy then (in the middle
    /// of building a large level) is left to finish on its own thread, which
    /// [`run`] does not wait for.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let local = self.local_addr()?;
        let (stop, stopped) = watch::channel(false);
        let (alive, mut all_gone) = mpsc::channel(1);
        let state = Arc::new(State {
            options: self.options,
            local,
            stats: self.stats,
            shutdown: stopped,
            alive,
        });
        let app = routes::router(Arc::clone(&state));
        let signal = async move {
            shutdown.await;
            let _ = stop.send(true);
        };
        let deadline = listen::serve(
            self.listener,
            app,
            &state.options,
            Arc::clone(&state.stats),
            signal,
            SHUTDOWN_GRACE,
        )
        .await;
        // Every connection's copy of the router is gone now, and with the
        // last copy of the state its sender; `recv` returns `None` once every
        // session's slot has been dropped too.
        drop(state);
        let _ = timeout_at(deadline, all_gone.recv()).await;
        Ok(())
    }
}

/// Why `serve` failed.
#[derive(Debug)]
pub enum Error {
    /// The address could not be bound.
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// Running the server failed.
    Io(io::Error),
    /// The options were refused ([`Options::check`]).
    Options(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Bind { addr, source } if source.kind() == io::ErrorKind::AddrInUse => write!(
                f,
                "{addr} is in use (is the lab already running?); try another --port, or --port 0 for any free one"
            ),
            Error::Bind { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
            Error::Io(e) => write!(f, "the server failed: {e}"),
            Error::Options(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Bind { source, .. } | Error::Io(source) => Some(source),
            Error::Options(_) => None,
        }
    }
}

/// Runs `quadrat-lab serve`: binds, prints the URL, serves until Ctrl-C (or
/// SIGTERM), and returns at most five seconds (and a moment) later, even
/// if a simulation is still busy.
pub fn run(args: &Args) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Io)?;
    run_then_exit(runtime, async {
        let options = Options::from(args);
        options.check().map_err(Error::Options)?;
        let addr = SocketAddr::new(options.host, options.port);
        let server = Server::bind(options)
            .await
            .map_err(|source| Error::Bind { addr, source })?;
        println!("quadrat lab: {}", server.url());
        if !args.host.is_loopback() {
            println!(
                "listening on {}: other machines that can reach it can open the lab too",
                args.host
            );
        }
        if args.open {
            let url = server.url();
            println!("opening {url} in the default browser; Ctrl-C stops the server");
            // A thread of its own: some browsers' launchers take a while.
            std::thread::spawn(move || {
                if let Err(e) = webbrowser::open(&url) {
                    eprintln!("warning: could not open a browser ({e}); open {url} in one");
                }
            });
        } else {
            println!("open the URL in a browser; Ctrl-C stops the server");
        }
        server.serve(shutdown_signal()).await.map_err(Error::Io)?;
        println!("quadrat lab: stopped");
        Ok(())
    })
}

/// Runs `future` on `runtime`, then shuts the runtime down waiting at most
/// [`EXIT_WAIT`] for the blocking tasks still running (dropping it would
/// wait for them without limit: each session's task waits for its
/// simulation thread, which finishes the change of settings it is in first).
fn run_then_exit<T>(runtime: tokio::runtime::Runtime, future: impl Future<Output = T>) -> T {
    let output = runtime.block_on(future);
    runtime.shutdown_timeout(EXIT_WAIT);
    output
}

/// Completes on Ctrl-C, or on SIGTERM on Unix.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads taking and giving back room at once, each asking for three
    /// tabs' room where the bound holds two: the sum never passes the
    /// bound, a thread that holds two is always refused a third, and
    /// everything is given back.
    #[test]
    fn reservations_from_many_threads_never_pass_the_bound() {
        let stats = Arc::new(Stats::default());
        let settings = Settings::default();
        let one = settings.weight();
        let max = 2 * one;
        let (peak, refusals) = (AtomicU64::new(0), AtomicU64::new(0));
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..20_000 {
                        let mut shares: [Bodies; 3] = core::array::from_fn(|_| Bodies {
                            stats: Arc::clone(&stats),
                            max,
                            held: 0,
                        });
                        let mut held = 0;
                        for share in &mut shares {
                            match share.reserve(&settings) {
                                Ok(()) => {
                                    held += 1;
                                    let now = stats.bodies();
                                    assert!(now <= max, "{now} held, the bound {max}");
                                    peak.fetch_max(now, Ordering::Relaxed);
                                }
                                Err(full) => {
                                    assert!(full.others + one > max, "{full:?}");
                                    refusals.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                        assert!(held <= 2, "three tabs' room held where two fit");
                    }
                });
            }
        });
        assert_eq!(stats.bodies(), 0);
        assert!(peak.into_inner() <= max);
        assert!(refusals.into_inner() >= 4 * 20_000);
    }

    #[test]
    fn close_reasons_are_cut_to_fit_the_frame() {
        let ascii = close_frame(4000, "a".repeat(123));
        assert_eq!(ascii.reason.len(), 123);
        assert_eq!(close_frame(4000, "a".repeat(124)).reason.len(), 123);
        // Two bytes a character: cut at 122, the last boundary within 123.
        let wide = close_frame(4000, "é".repeat(100));
        assert_eq!(wide.reason.as_str(), "é".repeat(61));
        assert_eq!(close_frame(4000, String::new()).reason.as_str(), "");
    }

    #[test]
    fn a_refusal_without_pairs_fits_a_close_frame_whole() {
        // A refused tab's reason leaves the pairs out, and with figures of
        // up to ten digits it is not cut.
        let full = BodiesFull {
            wanted: 9_999_999_999,
            bodies: 1_001,
            pairs: 500_000_000_000,
            others: 9_999_999_999,
            max: 9_999_999_999,
        };
        let reason = full.reason();
        assert!(reason.len() <= MAX_REASON, "{} bytes", reason.len());
        assert!(reason.ends_with("(--max-bodies)"), "{reason}");
        let full = BodiesFull {
            bodies: 9_999_999_999,
            ..full
        };
        assert_eq!(full.to_string(), full.reason());
        let crowd = BodiesFull {
            wanted: 100,
            bodies: 40,
            pairs: 1_200,
            ..full
        };
        assert!(
            crowd.to_string().ends_with(
                "That is 40 bodies, and 60 more for the pairs they would touch (about 1,200)"
            ),
            "{crowd}"
        );
    }

    #[test]
    fn exiting_does_not_wait_for_a_busy_blocking_task() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let start = std::time::Instant::now();
        let answer = run_then_exit(runtime, async {
            // A session's task waiting for a simulation thread that is busy
            // for a long while.
            drop(tokio::task::spawn_blocking(|| {
                std::thread::sleep(Duration::from_secs(20));
            }));
            42
        });
        assert_eq!(answer, 42);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "took {:?}",
            start.elapsed()
        );
    }
}
