//! One browser tab: a WebSocket connection and the simulation it drives.
//!
//! Three parts, joined by bounded channels:
//!
//! - the **simulation thread** owns the [`Simulation`]. It ticks about 60
//!   times a second, applies the commands that arrived in between, and
//!   publishes a frame into a `watch` channel once the writer has taken the
//!   one before: each frame says only what changed since the one before
//!   ([`frame::Encoder`]), so the page must see every frame published. A
//!   tick that ends while the writer is still busy is not sent (and is
//!   counted as dropped); the next frame carries its changes too. So a slow
//!   page never makes the server queue frames;
//! - the **reader** parses each message from the page
//!   ([`protocol::parse`]), answers a refused one with an `error`, and
//!   passes accepted commands on (a small bounded queue; a flood is refused
//!   too). When nothing at all comes from the page for the idle timeout,
//!   the page is taken for gone;
//! - the **writer** sends replies, the latest frame, and a ping every ping
//!   interval, which a live page answers with a Pong even when paused. A
//!   send that does not finish within the stall timeout (the page stopped
//!   reading) ends the session.
//!
//! Whichever part ends first says how the connection closes ([`End`]): a
//! close frame with a code the page can show, the answer to the page's own
//! close frame, or, when nothing can be sent any more, just closing it. The
//! session's end is also flagged to the thread, which then drops the
//! commands still queued (it checks the flag before each one) and stops
//! within a tick, or as soon as the command it is in the middle of is done,
//! freeing the simulation and the session's slot.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::thread;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message, WebSocket, close_code};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc as async_mpsc, watch};
use tokio::time::{MissedTickBehavior, interval_at, timeout};
use tungstenite::error::{Error as WsError, ProtocolError};

use super::frame::{Encoder, FrameInfo};
use super::protocol::{self, Command, Reply};
use super::{Bodies, Options, State, close_frame};
use crate::sim::{DT, Settings, Simulation};

/// Commands waiting for the simulation thread; more at once are refused.
const COMMAND_QUEUE: usize = 64;

/// Replies waiting for the writer; more at once are dropped.
const REPLY_QUEUE: usize = 16;

/// How long sending a close frame may take before the connection is closed
/// without it, and then how long the page has to answer it.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// A frame published by the simulation thread.
#[derive(Clone, Debug, Default)]
struct Published {
    number: u32,
    bytes: Bytes,
}

/// How a session's connection closes.
#[derive(Debug)]
enum End {
    /// Send the page this close frame, then close the connection.
    Close(CloseFrame),
    /// The page sent a close frame: send it back (the close handshake),
    /// then close the connection.
    Answer,
    /// Nothing can be sent any more (the connection broke, or the page
    /// stopped reading): just close it.
    Abandon,
}

impl End {
    fn close(code: u16, reason: impl Into<String>) -> End {
        End::Close(close_frame(code, reason.into()))
    }

    /// The end a broken read calls for; see the close codes in
    /// [`protocol`].
    fn broken(error: axum::Error) -> End {
        let Ok(error) = error.into_inner().downcast::<WsError>() else {
            return End::Abandon;
        };
        match *error {
            WsError::Capacity(_) => End::close(
                close_code::SIZE,
                format!(
                    "message too big: the limit is {} bytes",
                    super::routes::MAX_MESSAGE
                ),
            ),
            WsError::Utf8(_) => End::close(close_code::INVALID, "text message is not valid UTF-8"),
            // The page went away without a close frame: no one to tell.
            WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => End::Abandon,
            WsError::Protocol(e) => {
                End::close(close_code::PROTOCOL, format!("protocol error: {e}"))
            }
            // I/O errors: the connection is gone.
            _ => End::Abandon,
        }
    }
}

/// Runs one session until the page goes away, stalls, falls silent, breaks
/// the protocol, or the server shuts down. Returns after the connection is
/// closed and the simulation thread has stopped.
pub(super) async fn run(socket: WebSocket, state: Arc<State>, bodies: Bodies) {
    let sim = match Simulation::new(state.options.settings) {
        Ok(sim) => sim,
        Err(message) => {
            eprintln!("quadrat lab: invalid initial settings: {message}");
            return;
        }
    };
    let (commands, command_rx) = mpsc::sync_channel(COMMAND_QUEUE);
    let (replies, reply_rx) = async_mpsc::channel(REPLY_QUEUE);
    let (frames, frame_rx) = watch::channel(Published::default());
    let taken = Arc::new(AtomicU32::new(0));
    let ended = Ended(Arc::new(AtomicBool::new(false)));
    let _ = replies.try_send(Reply::hello(sim.settings()).to_json());

    let driver = Driver {
        sim,
        bodies,
        paused: false,
        step: false,
        dirty: true,
        frame: 0,
        dropped: 0,
        encoder: Encoder::new(),
        rate: Rate::default(),
        replies: replies.clone(),
        frames,
        taken: Arc::clone(&taken),
        ended: Arc::clone(&ended.0),
    };
    let thread = match thread::Builder::new()
        .name("lab-simulation".to_owned())
        .spawn(move || driver.run(&command_rx))
    {
        Ok(thread) => thread,
        Err(e) => {
            eprintln!("quadrat lab: cannot start a simulation thread: {e}");
            return;
        }
    };

    let (mut sink, mut stream) = socket.split();
    let mut shutdown = state.shutdown.clone();
    let options = &state.options;
    let end = tokio::select! {
        end = read(&mut stream, commands, replies, options.idle_timeout) => end,
        end = write(&mut sink, frame_rx, reply_rx, &taken, options, &mut shutdown) => end,
    };
    // The thread need not finish the commands still queued: no one will
    // see their result.
    ended.set();
    match end {
        End::Close(frame) => {
            let sent = timeout(CLOSE_TIMEOUT, sink.send(Message::Close(Some(frame)))).await;
            if let Ok(Ok(())) = sent {
                // The page answers with its own close frame (a stream that
                // broke, or a page that is gone, ends this at once or soon).
                let answer = async { while let Some(Ok(_)) = stream.next().await {} };
                let _ = timeout(CLOSE_TIMEOUT, answer).await;
            }
        }
        // Closing after the page's close frame sends the answer queued for
        // it.
        End::Answer => {
            let _ = timeout(CLOSE_TIMEOUT, sink.close()).await;
        }
        End::Abandon => {}
    }
    // The server closes the TCP connection, as RFC 6455 asks.
    drop((sink, stream));
    // Every channel to the thread is closed and the end flagged: it stops
    // within a tick, or after the command it is applying.
    let _ = tokio::task::spawn_blocking(move || thread.join()).await;
}

/// Tells the simulation thread that the session has ended: set once the
/// connection side is done, or when the session is dropped (a server that
/// shuts down drops the sessions still open after its grace).
struct Ended(Arc<AtomicBool>);

impl Ended {
    fn set(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Drop for Ended {
    fn drop(&mut self) {
        self.set();
    }
}

/// Reads the page's messages until it closes the connection, breaks the
/// protocol, or sends nothing for `idle`.
async fn read(
    stream: &mut SplitStream<WebSocket>,
    commands: SyncSender<Command>,
    replies: async_mpsc::Sender<String>,
    idle: Duration,
) -> End {
    loop {
        let message = match timeout(idle, stream.next()).await {
            Ok(Some(Ok(message))) => message,
            Ok(Some(Err(error))) => return End::broken(error),
            Ok(None) => return End::Abandon,
            Err(_) => {
                return End::close(
                    protocol::TIMED_OUT,
                    format!("timed out: nothing from the page for {idle:.0?}"),
                );
            }
        };
        let refusal = match message {
            Message::Text(text) => match protocol::parse(text.as_str()) {
                Ok(command) => match commands.try_send(command) {
                    Ok(()) => None,
                    Err(TrySendError::Full(_)) => {
                        Some("too many messages at once: this one was dropped".to_owned())
                    }
                    Err(TrySendError::Disconnected(_)) => {
                        return End::close(close_code::ERROR, "the simulation stopped");
                    }
                },
                Err(message) => Some(message),
            },
            Message::Binary(_) => {
                Some("binary messages are not accepted: send JSON text".to_owned())
            }
            Message::Close(_) => return End::Answer,
            // A Pong is the answer to the writer's ping: the page is alive,
            // which the read itself has shown.
            Message::Ping(_) | Message::Pong(_) => None,
        };
        if let Some(message) = refusal {
            let _ = replies.try_send(Reply::Error { message }.to_json());
        }
    }
}

/// Sends replies, the latest frame and pings until the page stops reading
/// for the stall timeout, the simulation stops, or the server shuts down.
async fn write(
    sink: &mut SplitSink<WebSocket, Message>,
    mut frames: watch::Receiver<Published>,
    mut replies: async_mpsc::Receiver<String>,
    taken: &AtomicU32,
    options: &Options,
    shutdown: &mut watch::Receiver<bool>,
) -> End {
    // (An interval must not be zero.)
    let every = options.ping_interval.max(Duration::from_millis(1));
    let mut ping = interval_at(tokio::time::Instant::now() + every, every);
    ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let message = tokio::select! {
            biased;
            _ = shutdown.wait_for(|stop| *stop) => {
                return End::close(close_code::AWAY, "the server is shutting down");
            }
            reply = replies.recv() => match reply {
                Some(text) => Message::text(text),
                None => return End::close(close_code::ERROR, "the simulation stopped"),
            },
            changed = frames.changed() => {
                if changed.is_err() {
                    return End::close(close_code::ERROR, "the simulation stopped");
                }
                // Recorded while the frame is borrowed, so the simulation
                // thread (which replaces it under the write lock) sees it.
                let latest = frames.borrow_and_update();
                taken.store(latest.number, Ordering::Release);
                Message::binary(latest.bytes.clone())
            }
            _ = ping.tick() => Message::Ping(Bytes::new()),
        };
        match timeout(options.stall_timeout, sink.send(message)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => return End::Abandon,
        }
    }
}

/// The simulation thread's state.
struct Driver {
    sim: Simulation,
    paused: bool,
    /// One tick requested while paused.
    step: bool,
    /// Something changed that the next frame must show.
    dirty: bool,
    frame: u32,
    dropped: u32,
    encoder: Encoder,
    rate: Rate,
    replies: async_mpsc::Sender<String>,
    frames: watch::Sender<Published>,
    taken: Arc<AtomicU32>,
    /// Set when the session has ended: commands still queued are dropped.
    ended: Arc<AtomicBool>,
    /// The session's share of the server's bodies: declared last, so given
    /// back once the simulation, the encoder's pictures and the last frame
    /// are freed.
    bodies: Bodies,
}

impl Driver {
    /// Ticks until the session ends or its channels close.
    fn run(mut self, commands: &Receiver<Command>) {
        let tick = Duration::from_secs_f32(DT);
        let mut next = Instant::now();
        loop {
            loop {
                // (Checked before each command: a queue of slow ones, left
                // behind by a tab that has gone, is not worked through.)
                if self.ended.load(Ordering::Acquire) {
                    return;
                }
                match commands.recv_timeout(next.saturating_duration_since(Instant::now())) {
                    Ok(command) => self.handle(command),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            let now = Instant::now();
            // Behind schedule (a slow tick), start the next one at once
            // rather than catching up.
            next = (next + tick).max(now);
            let advance = !self.paused || std::mem::take(&mut self.step);
            if advance || self.dirty || self.sim.player_moving() {
                self.sim.tick(advance);
                self.dirty = false;
                if advance {
                    self.rate.tick(now);
                }
                match self.publish() {
                    Some(true) => {}
                    // Not sent: the next tick must be, even when paused.
                    Some(false) => self.dirty = true,
                    None => return,
                }
            } else if self.frames.is_closed() {
                return;
            }
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Settings(update) => {
                let settings = update.apply_to(self.sim.settings());
                let reply = match self.apply(settings) {
                    Ok(()) => Reply::Settings {
                        settings: settings.into(),
                    },
                    Err(message) => Reply::Error { message },
                };
                let _ = self.replies.try_send(reply.to_json());
            }
            Command::Pause(paused) => {
                self.paused = paused;
                // Measure afresh from here, showing the last rate meanwhile.
                self.rate.restart();
            }
            // A step means something only while paused.
            Command::Step => self.step = self.paused,
            Command::Player(direction) => self.sim.set_player_direction(direction),
            Command::Query(area) => self.sim.set_query(area),
            Command::Pick(at) => {
                self.sim.pick(at);
            }
        }
        self.dirty = true;
    }

    /// Applies valid settings whose weight the server has room for; the
    /// session holds the larger of the old and new weights while the change
    /// is made, then the new.
    fn apply(&mut self, settings: Settings) -> Result<(), String> {
        settings.validate()?;
        self.bodies
            .reserve(&settings)
            .map_err(|full| full.to_string())?;
        let result = self.sim.apply(settings);
        self.bodies.release_to(self.sim.settings().weight());
        result
    }

    /// Encodes and publishes the frame of the last tick if the writer has
    /// taken the one before (`Some(true)`); else counts it as dropped
    /// (`Some(false)`). `None` once the writer is gone.
    fn publish(&mut self) -> Option<bool> {
        if self.frames.is_closed() {
            return None;
        }
        if self.frame > 0 && self.taken.load(Ordering::Acquire) < self.frame {
            self.dropped += 1;
            return Some(false);
        }
        self.frame += 1;
        let info = FrameInfo {
            frame: self.frame,
            paused: self.paused,
            sim_fps: if self.paused {
                0.0
            } else {
                self.rate.per_second
            },
            dropped: self.dropped,
        };
        let mut bytes = Vec::new();
        self.encoder.encode(&self.sim, info, &mut bytes);
        // The frame before was taken: nothing unseen is replaced.
        self.frames.send_replace(Published {
            number: self.frame,
            bytes: bytes.into(),
        });
        Some(!self.frames.is_closed())
    }
}

/// Ticks per second, over windows of about half a second.
#[derive(Debug, Default)]
struct Rate {
    since: Option<Instant>,
    ticks: u32,
    per_second: f32,
}

impl Rate {
    /// Starts a new measuring window, keeping the last figure until it ends.
    fn restart(&mut self) {
        self.since = None;
        self.ticks = 0;
    }

    fn tick(&mut self, now: Instant) {
        let Some(since) = self.since else {
            self.since = Some(now);
            return;
        };
        self.ticks += 1;
        let elapsed = now.duration_since(since).as_secs_f32();
        if elapsed >= 0.5 {
            self.per_second = self.ticks as f32 / elapsed;
            self.since = Some(now);
            self.ticks = 0;
        }
    }
}
