//! One browser tab: a WebSocket connection and the simulation it drives.
//!
//! Three parts, joined by bounded channels:
//!
//! - the **simulation thread** owns the [`Simulation`]. It ticks about 60
//!   times a second, applies the commands that arrived in between, and
//!   publishes each frame into a `watch` channel, which holds only the
//!   latest one: a frame the writer has not taken by the next tick is
//!   replaced (and counted as dropped), so a slow page never makes the
//!   server queue frames;
//! - the **reader** parses each message from the page
//!   ([`protocol::parse`]), answers a refused one with an `error`, and
//!   passes accepted commands on (a small bounded queue; a flood is refused
//!   too);
//! - the **writer** sends replies and the latest frame. A send that does not
//!   finish within the stall timeout (the page stopped reading) ends the
//!   session.
//!
//! When the page closes, the reader or writer ends, the channels close, and
//! the thread stops within a tick and frees the simulation.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::thread;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message, WebSocket, close_code};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc as async_mpsc, watch};
use tokio::time::timeout;

use super::State;
use super::frame::{self, FrameInfo};
use super::protocol::{self, Command, Reply};
use crate::sim::{DT, Simulation};

/// Commands waiting for the simulation thread; more at once are refused.
const COMMAND_QUEUE: usize = 64;

/// Replies waiting for the writer; more at once are dropped.
const REPLY_QUEUE: usize = 16;

/// A frame published by the simulation thread.
#[derive(Clone, Debug, Default)]
struct Published {
    number: u32,
    bytes: Bytes,
}

/// Runs one session until the page goes away, stalls, or the server shuts
/// down. Returns after the simulation thread has stopped.
pub(super) async fn run(socket: WebSocket, state: Arc<State>) {
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
    let _ = replies.try_send(Reply::hello(sim.settings()).to_json());

    let driver = Driver {
        sim,
        paused: false,
        step: false,
        dirty: true,
        frame: 0,
        dropped: 0,
        rate: Rate::default(),
        replies: replies.clone(),
        frames,
        taken: Arc::clone(&taken),
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

    let (sink, stream) = socket.split();
    let mut shutdown = state.shutdown.clone();
    tokio::select! {
        () = read(stream, commands, replies) => {}
        () = write(sink, frame_rx, reply_rx, &taken, state.options.stall_timeout, &mut shutdown) => {}
    }
    // Every channel to the thread is closed now: it stops within a tick.
    let _ = tokio::task::spawn_blocking(move || thread.join()).await;
}

/// Reads the page's messages until it closes the connection.
async fn read(
    mut stream: SplitStream<WebSocket>,
    commands: SyncSender<Command>,
    replies: async_mpsc::Sender<String>,
) {
    while let Some(Ok(message)) = stream.next().await {
        let refusal = match message {
            Message::Text(text) => match protocol::parse(text.as_str()) {
                Ok(command) => match commands.try_send(command) {
                    Ok(()) => None,
                    Err(TrySendError::Full(_)) => {
                        Some("too many messages at once: this one was dropped".to_owned())
                    }
                    Err(TrySendError::Disconnected(_)) => return,
                },
                Err(message) => Some(message),
            },
            Message::Binary(_) => {
                Some("binary messages are not accepted: send JSON text".to_owned())
            }
            Message::Close(_) => return,
            Message::Ping(_) | Message::Pong(_) => None,
        };
        if let Some(message) = refusal {
            let _ = replies.try_send(Reply::Error { message }.to_json());
        }
    }
}

/// Sends replies and the latest frame until the page stops reading for
/// `stall`, a channel closes, or the server shuts down.
async fn write(
    mut sink: SplitSink<WebSocket, Message>,
    mut frames: watch::Receiver<Published>,
    mut replies: async_mpsc::Receiver<String>,
    taken: &AtomicU32,
    stall: Duration,
    shutdown: &mut watch::Receiver<bool>,
) {
    loop {
        let message = tokio::select! {
            biased;
            _ = shutdown.changed() => {
                let close = CloseFrame { code: close_code::AWAY, reason: "the server is shutting down".into() };
                let _ = timeout(stall, sink.send(Message::Close(Some(close)))).await;
                return;
            }
            reply = replies.recv() => match reply {
                Some(text) => Message::text(text),
                None => return,
            },
            changed = frames.changed() => {
                if changed.is_err() {
                    return;
                }
                // Recorded while the frame is borrowed, so the simulation
                // thread (which replaces it under the write lock) sees it.
                let latest = frames.borrow_and_update();
                taken.store(latest.number, Ordering::Release);
                Message::binary(latest.bytes.clone())
            }
        };
        match timeout(stall, sink.send(message)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => return,
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
    rate: Rate,
    replies: async_mpsc::Sender<String>,
    frames: watch::Sender<Published>,
    taken: Arc<AtomicU32>,
}

impl Driver {
    /// Ticks until the session's channels close.
    fn run(mut self, commands: &Receiver<Command>) {
        let tick = Duration::from_secs_f32(DT);
        let mut next = Instant::now();
        loop {
            loop {
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
                if !self.publish() {
                    return;
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
                let reply = match self.sim.apply(settings) {
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

    /// Encodes and publishes the frame of the last tick; `false` once the
    /// writer is gone.
    fn publish(&mut self) -> bool {
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
        frame::encode(&self.sim, info, &mut bytes);
        let replaced = self.frames.send_replace(Published {
            number: self.frame,
            bytes: bytes.into(),
        });
        if replaced.number > 0 && self.taken.load(Ordering::Acquire) < replaced.number {
            self.dropped += 1;
        }
        !self.frames.is_closed()
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
