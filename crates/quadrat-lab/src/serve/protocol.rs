//! The JSON messages between the page and the server.
//!
//! The page sends small JSON text messages, each an object with a `type`:
//!
//! | `type` | fields | effect |
//! |---|---|---|
//! | `settings` | any of `count`, `size`, `speed`, `scene` (`uniform`, `clustered`, `mixed`, `level`), `tiles` (the level's static tiles, 0 to 1,000,000), `max_items`, `max_depth`, `broad_phase` (`quadtree`, `brute_force`), `seed` | changes those settings |
//! | `pause` | `paused`: bool | stops or resumes the objects |
//! | `step` | | one tick while paused |
//! | `player` | `dx`, `dy`: numbers in `[-1, 1]` | the player's direction (0, 0 stops it) |
//! | `query` | `rect`: `[x0, y0, x1, y1]` or `null` | sets or clears the query rectangle (world units, corners in any order) |
//! | `pick` | `at`: `[x, y]` or `null` | picks the object nearest to the point, or clears the pick |
//!
//! Every message is checked by [`parse`] before anything changes: unknown
//! types and fields, wrong field types and values out of range are refused
//! with a message, which the server sends back as an `error`. Settings are
//! checked once more against each other by the simulation (brute force
//! refuses large counts), and against the room the server has left for
//! bodies (`--max-bodies`, which counts a crowd's pairs too).
//!
//! The server sends [`Reply`] messages as JSON text (`hello` on connect,
//! `settings` after each accepted change, `error`) and the frames of
//! [`frame`](super::frame) as binary messages.
//!
//! A binary message from the page is refused like a bad JSON message, with
//! an `error`, and the session goes on. What breaks the WebSocket protocol
//! itself ends the session, with a close frame whose code says why (and a
//! short reason):
//!
//! | code | when |
//! |---:|---|
//! | 1001 (going away) | the server is shutting down |
//! | 1002 (protocol error) | a frame the protocol forbids: unmasked, reserved bits or opcodes, a fragmented or oversized control frame, a continuation without a start |
//! | 1007 (invalid payload) | a text message that is not valid UTF-8 |
//! | 1009 (message too big) | a message or frame over 4,096 bytes |
//! | 1011 (internal error) | the session's simulation stopped |
//! | [`TIMED_OUT`] (4408) | nothing (no message, no Pong) came from the page for the server's idle timeout |
//! | [`REFUSED_ORIGIN`] (4403) | right after the handshake: the page is not the lab's own (another origin); the reason names it |
//! | [`TOO_MANY_TABS`] (4429) | right after the handshake: every session slot is taken (`--max-sessions`); the reason says how many |
//! | [`SERVER_FULL`] (4507) | right after the handshake: the new tab's bodies (their crowd's pairs counted) would pass the server's bound on all tabs' bodies together (`--max-bodies`); the reason says how many are held (cut, like every close reason, to the 123 bytes a close frame has room for) |
//!
//! A close frame from the page is answered with the same code, as the close
//! handshake asks. A page that stops reading gets no close frame (it would
//! not read it): its connection is closed after the stall timeout.

use quadrat::{Aabb, MAX_DEPTH, Vec2};
use serde::{Deserialize, Serialize};

use crate::sim::{
    self, BRUTE_FORCE_MAX, BroadPhase, MAX_COUNT, MAX_ITEMS_LIMIT, MIN_COUNT, SIZE_RANGE,
    SPEED_RANGE, Scene, Settings, TILES_MAX, WORLD,
};

/// Close code of a session whose page fell silent: 4000 to 4999 are for
/// applications; 4408 after HTTP's 408 Request Timeout.
pub const TIMED_OUT: u16 = 4408;

/// Close code of a WebSocket from another origin, closed right after the
/// handshake: after HTTP's 403 Forbidden.
pub const REFUSED_ORIGIN: u16 = 4403;

/// Close code of a WebSocket refused because every session slot is taken,
/// closed right after the handshake: after HTTP's 429 Too Many Requests.
pub const TOO_MANY_TABS: u16 = 4429;

/// Close code of a WebSocket refused because the bodies of the other tabs
/// leave no room for the new tab's (`--max-bodies`): after HTTP's 507
/// Insufficient Storage.
pub const SERVER_FULL: u16 = 4507;

/// Coordinates from the page may lie this far outside the world, no more.
const COORDINATE_LIMIT: f32 = 1.0e6;

/// A checked message from the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Change the settings that are given.
    Settings(SettingsUpdate),
    /// Stop (`true`) or resume (`false`) the objects.
    Pause(bool),
    /// Advance the objects by one tick.
    Step,
    /// The player's direction, each component in `[-1, 1]`.
    Player(Vec2),
    /// Set or clear the query rectangle.
    Query(Option<Aabb>),
    /// Pick the object nearest to a point, or clear the pick.
    Pick(Option<Vec2>),
}

/// Settings to change; `None` leaves a setting as it is.
///
/// Each value given is already checked on its own;
/// [`apply_to`](SettingsUpdate::apply_to) merges them into the current
/// settings.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SettingsUpdate {
    /// Number of objects.
    pub count: Option<usize>,
    /// Size factor.
    pub size: Option<f32>,
    /// Speed factor.
    pub speed: Option<f32>,
    /// The scene: a layout of objects, or the level.
    pub scene: Option<Scene>,
    /// Static tiles of the level.
    pub tiles: Option<usize>,
    /// Split threshold of the tree.
    pub max_items: Option<usize>,
    /// Deepest level of the tree.
    pub max_depth: Option<u8>,
    /// How pairs are found.
    pub broad_phase: Option<BroadPhase>,
    /// Seed of the layout.
    pub seed: Option<u64>,
}

impl SettingsUpdate {
    /// `current` with the given values put in.
    #[must_use]
    pub fn apply_to(&self, current: Settings) -> Settings {
        Settings {
            count: self.count.unwrap_or(current.count),
            size: self.size.unwrap_or(current.size),
            speed: self.speed.unwrap_or(current.speed),
            scene: self.scene.unwrap_or(current.scene),
            tiles: self.tiles.unwrap_or(current.tiles),
            max_items: self.max_items.unwrap_or(current.max_items),
            max_depth: self.max_depth.unwrap_or(current.max_depth),
            broad_phase: self.broad_phase.unwrap_or(current.broad_phase),
            seed: self.seed.unwrap_or(current.seed),
        }
    }
}

/// The messages as they arrive, before the values are checked.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum Incoming {
    Settings {
        #[serde(default, deserialize_with = "present")]
        count: Option<u64>,
        #[serde(default, deserialize_with = "present")]
        size: Option<f64>,
        #[serde(default, deserialize_with = "present")]
        speed: Option<f64>,
        #[serde(default, deserialize_with = "present")]
        scene: Option<String>,
        #[serde(default, deserialize_with = "present")]
        tiles: Option<u64>,
        #[serde(default, deserialize_with = "present")]
        max_items: Option<u64>,
        #[serde(default, deserialize_with = "present")]
        max_depth: Option<u64>,
        #[serde(default, deserialize_with = "present")]
        broad_phase: Option<String>,
        #[serde(default, deserialize_with = "present")]
        seed: Option<u64>,
    },
    Pause {
        paused: bool,
    },
    Step {},
    Player {
        dx: f64,
        dy: f64,
    },
    Query {
        rect: Option<[f64; 4]>,
    },
    Pick {
        at: Option<[f64; 2]>,
    },
}

/// A settings field that is present must hold a value: `null` (which is
/// what `JSON.stringify` makes of `NaN`) is refused, not taken as "leave it".
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// Parses and checks one text message from the page.
///
/// ```
/// use quadrat_lab::serve::protocol::{parse, Command};
/// assert_eq!(parse(r#"{"type":"pause","paused":true}"#), Ok(Command::Pause(true)));
/// assert!(parse(r#"{"type":"settings","count":1000000000}"#).unwrap_err().contains("count"));
/// assert!(parse(r#"{"type":"fly"}"#).unwrap_err().contains("unknown variant `fly`"));
/// ```
pub fn parse(text: &str) -> Result<Command, String> {
    let incoming: Incoming = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(match incoming {
        Incoming::Settings {
            count,
            size,
            speed,
            scene,
            tiles,
            max_items,
            max_depth,
            broad_phase,
            seed,
        } => Command::Settings(SettingsUpdate {
            count: count
                .map(|c| in_range("count", c, MIN_COUNT as u64, MAX_COUNT as u64))
                .transpose()?,
            size: size.map(|s| factor("size", s, SIZE_RANGE)).transpose()?,
            speed: speed.map(|s| factor("speed", s, SPEED_RANGE)).transpose()?,
            scene: scene.map(|s| scene_named(&s)).transpose()?,
            tiles: tiles
                .map(|t| in_range("tiles", t, 0, TILES_MAX as u64))
                .transpose()?,
            max_items: max_items
                .map(|m| in_range("max_items", m, 1, MAX_ITEMS_LIMIT as u64))
                .transpose()?,
            max_depth: max_depth
                .map(|d| in_range("max_depth", d, 0, u64::from(MAX_DEPTH)).map(|d| d as u8))
                .transpose()?,
            broad_phase: broad_phase.map(|b| broad(&b)).transpose()?,
            seed,
        }),
        Incoming::Pause { paused } => Command::Pause(paused),
        Incoming::Step {} => Command::Step,
        Incoming::Player { dx, dy } => Command::Player(Vec2::new(unit("dx", dx)?, unit("dy", dy)?)),
        Incoming::Query { rect } => Command::Query(
            rect.map(|[x0, y0, x1, y1]| {
                let (x0, y0) = (coordinate("rect[0]", x0)?, coordinate("rect[1]", y0)?);
                let (x1, y1) = (coordinate("rect[2]", x1)?, coordinate("rect[3]", y1)?);
                Ok::<_, String>(Aabb::new(
                    [x0.min(x1), y0.min(y1)],
                    [x0.max(x1), y0.max(y1)],
                ))
            })
            .transpose()?,
        ),
        Incoming::Pick { at } => Command::Pick(
            at.map(|[x, y]| {
                Ok::<_, String>(Vec2::new(coordinate("at[0]", x)?, coordinate("at[1]", y)?))
            })
            .transpose()?,
        ),
    })
}

fn in_range(field: &str, value: u64, lo: u64, hi: u64) -> Result<usize, String> {
    if (lo..=hi).contains(&value) {
        Ok(value as usize)
    } else {
        Err(format!(
            "{field} must be between {} and {} (got {})",
            sim::thousands(lo),
            sim::thousands(hi),
            sim::thousands(value)
        ))
    }
}

// The numbers below are taken with `+ 0.0`, which turns -0 (valid JSON)
// into 0: the settings echoed back and the player's direction then never
// carry a minus sign the page did not mean.

fn factor(field: &str, value: f64, (lo, hi): (f32, f32)) -> Result<f32, String> {
    // Compared as `f32`, the type kept: 0.1 is then exactly the bound.
    let v = value as f32;
    if (lo..=hi).contains(&v) {
        Ok(v + 0.0)
    } else {
        Err(format!(
            "{field} must be between {lo} and {hi} (got {value})"
        ))
    }
}

fn unit(field: &str, value: f64) -> Result<f32, String> {
    if (-1.0..=1.0).contains(&value) {
        Ok(value as f32 + 0.0)
    } else {
        Err(format!("{field} must be between -1 and 1 (got {value})"))
    }
}

fn coordinate(field: &str, value: f64) -> Result<f32, String> {
    let limit = f64::from(COORDINATE_LIMIT);
    if (-limit..=limit).contains(&value) {
        Ok(value as f32 + 0.0)
    } else {
        Err(format!(
            "{field} must be between -{limit} and {limit} (got {value})"
        ))
    }
}

fn scene_named(name: &str) -> Result<Scene, String> {
    Scene::by_name(name).ok_or_else(|| {
        format!("unknown scene `{name}`, expected one of `uniform`, `clustered`, `mixed`, `level`")
    })
}

fn broad(name: &str) -> Result<BroadPhase, String> {
    BroadPhase::ALL
        .into_iter()
        .find(|b| b.name() == name)
        .ok_or_else(|| {
            format!("unknown broad_phase `{name}`, expected `quadtree` or `brute_force`")
        })
}

/// The settings as the page sees them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SettingsView {
    /// Number of objects.
    pub count: usize,
    /// Size factor.
    pub size: f32,
    /// Speed factor.
    pub speed: f32,
    /// `uniform`, `clustered`, `mixed` or `level`.
    pub scene: &'static str,
    /// Static tiles of the level scene.
    pub tiles: usize,
    /// Split threshold.
    pub max_items: usize,
    /// Deepest level.
    pub max_depth: u8,
    /// `quadtree` or `brute_force`.
    pub broad_phase: &'static str,
    /// Seed of the layout.
    pub seed: u64,
}

impl From<Settings> for SettingsView {
    fn from(s: Settings) -> SettingsView {
        SettingsView {
            count: s.count,
            size: s.size,
            speed: s.speed,
            scene: s.scene.name(),
            tiles: s.tiles,
            max_items: s.max_items,
            max_depth: s.max_depth,
            broad_phase: s.broad_phase.name(),
            seed: s.seed,
        }
    }
}

/// The bounds the page's controls use.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Limits {
    /// Fewest objects.
    pub count_min: usize,
    /// Most objects.
    pub count_max: usize,
    /// Most objects brute force accepts.
    pub brute_force_max: usize,
    /// Most objects a frame carries: every object, at every count.
    pub draw_max: usize,
    /// Most static tiles of the level scene.
    pub tiles_max: usize,
    /// Size factor range.
    pub size: (f32, f32),
    /// Speed factor range.
    pub speed: (f32, f32),
    /// Largest split threshold.
    pub max_items: usize,
    /// Deepest level allowed.
    pub max_depth: u8,
}

impl Limits {
    /// The lab's limits.
    #[must_use]
    pub fn current() -> Limits {
        Limits {
            count_min: MIN_COUNT,
            count_max: MAX_COUNT,
            brute_force_max: BRUTE_FORCE_MAX,
            draw_max: MAX_COUNT,
            tiles_max: TILES_MAX,
            size: SIZE_RANGE,
            speed: SPEED_RANGE,
            max_items: MAX_ITEMS_LIMIT,
            max_depth: MAX_DEPTH,
        }
    }
}

/// A text message from the server.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// Sent once, first: what the page needs to set up its controls.
    Hello {
        /// The lab's version.
        version: &'static str,
        /// Side of the square world.
        world: f32,
        /// Bounds of the controls.
        limits: Limits,
        /// The settings in force.
        settings: SettingsView,
    },
    /// The settings in force after an accepted change.
    Settings {
        /// The settings.
        settings: SettingsView,
    },
    /// A message was refused; nothing changed.
    Error {
        /// What was wrong.
        message: String,
    },
}

impl Reply {
    /// The `hello` message for a session starting with `settings`.
    #[must_use]
    pub fn hello(settings: Settings) -> Reply {
        Reply::Hello {
            version: env!("CARGO_PKG_VERSION"),
            world: WORLD,
            limits: Limits::current(),
            settings: settings.into(),
        }
    }

    /// The message as JSON text.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("replies always serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_update_merges_only_given_values() {
        let Command::Settings(update) =
            parse(r#"{"type":"settings","count":300,"scene":"mixed"}"#).unwrap()
        else {
            panic!("not a settings command");
        };
        let merged = update.apply_to(Settings::default());
        assert_eq!(merged.count, 300);
        assert_eq!(
            merged.scene,
            Scene::Objects(quadrat::scenario::Layout::MixedSizes)
        );
        assert_eq!(merged.max_items, Settings::default().max_items);
    }
}
