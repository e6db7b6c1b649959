//! The binary frames the server sends the page, one per tick.
//!
//! All numbers are little-endian. A frame is a 96-byte header, then three
//! arrays: `sent` object records, `leaves` node rectangles and `sent`
//! marks. The `u16` arrays come first, so they stay 2-byte aligned and the
//! page can read them as typed arrays.
//!
//! | offset | type | field |
//! |---:|---|---|
//! | 0 | `[u8; 4]` | magic `QLF1` |
//! | 4 | `u32` | frame number (1, 2, … per connection) |
//! | 8 | `u32` | objects simulated (the player not included) |
//! | 12 | `u32` | object records in this frame: objects + player, or 0 above [`OBJECT_LIMIT`] |
//! | 16 | `u32` | node rectangles in this frame: the tree's leaves, at most [`LEAF_LIMIT`] |
//! | 20 | `u32` | nodes of the tree |
//! | 24 | `u8` | depth of the tree |
//! | 25 | `u8` | flags: [`Header::PAUSED`], [`Header::BRUTE_FORCE`], … |
//! | 26 | `u16` | reserved (0) |
//! | 28 | `u32` | touching pairs (exact test) |
//! | 32 | `u64` | pair checks of the broad phase |
//! | 40 | `u64` | candidate pairs handed to the exact test |
//! | 48 | `u32` | colliding objects |
//! | 52 | `u32` | objects the query rectangle returns (the server's answer) |
//! | 56 | `u32` | the player's candidates |
//! | 60 | `u32` | the player's contacts |
//! | 64 | `u32` | picked object's index, `u32::MAX` for none |
//! | 68 | `f32` | picked object's distance from the click |
//! | 72 | `f32` | time to update the tree, ms |
//! | 76 | `f32` | time to find pairs and test them exactly, ms |
//! | 80 | `f32` | simulation ticks per second |
//! | 84 | `f32` | player centre x |
//! | 88 | `f32` | player centre y |
//! | 92 | `u32` | frames dropped so far for this connection (the page was slower than the simulation) |
//!
//! Then, with `S` records and `L` rectangles:
//!
//! - `S × [u16; 4]`: centre x, centre y, half width, half height;
//! - `L × [u16; 4]`: min x, min y, max x, max y of a leaf's cell;
//! - `S × u8`: the object's [`Marks`] bits.
//!
//! Coordinates are quantized to `u16` over the world's side: `q = round(v ·
//! 65535 / WORLD)`, clamped to `0..=65535` (a step of 0.015 world units).
//! The player is the last record.

use quadrat::{Aabb, Shape, Vec2};

use crate::sim::{Marks, Simulation, WORLD};

/// Size of the header in bytes.
pub const HEADER_LEN: usize = 96;

/// The most object records a frame carries. With more objects, the frame
/// carries none (the page shows figures and nodes only).
pub const OBJECT_LIMIT: usize = 50_000;

/// The most node rectangles a frame carries.
pub const LEAF_LIMIT: usize = 65_536;

const MAGIC: [u8; 4] = *b"QLF1";

/// What a frame says besides the objects and nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Header {
    /// Frame number, counting from 1 on each connection.
    pub frame: u32,
    /// Objects simulated, the player not included.
    pub count: u32,
    /// Object records in the frame.
    pub sent: u32,
    /// Node rectangles in the frame.
    pub leaves: u32,
    /// Nodes of the tree.
    pub nodes: u32,
    /// Depth of the tree.
    pub depth: u8,
    /// [`Header::PAUSED`] and the other flag bits.
    pub flags: u8,
    /// Touching pairs.
    pub pairs: u32,
    /// Pair checks of the broad phase.
    pub checks: u64,
    /// Candidate pairs handed to the exact test.
    pub candidates: u64,
    /// Colliding objects.
    pub colliding: u32,
    /// Objects the query rectangle returns.
    pub query_hits: u32,
    /// The player's candidates.
    pub player_candidates: u32,
    /// The player's contacts.
    pub player_contacts: u32,
    /// Picked object, `u32::MAX` for none.
    pub picked: u32,
    /// Picked object's distance from the click.
    pub picked_distance: f32,
    /// Tree update time, ms.
    pub update_ms: f32,
    /// Pair finding and exact tests, ms.
    pub pairs_ms: f32,
    /// Simulation ticks per second.
    pub sim_fps: f32,
    /// Player centre.
    pub player: Vec2,
    /// Frames dropped so far on this connection.
    pub dropped: u32,
}

impl Header {
    /// The objects are paused.
    pub const PAUSED: u8 = 1 << 0;
    /// Pairs come from brute force.
    pub const BRUTE_FORCE: u8 = 1 << 1;
    /// Too many objects to send: the frame has no object records.
    pub const OBJECTS_OMITTED: u8 = 1 << 2;
    /// Too many leaves to send: the frame has the first [`LEAF_LIMIT`].
    pub const LEAVES_TRUNCATED: u8 = 1 << 3;
    /// A query rectangle is set.
    pub const QUERY: u8 = 1 << 4;
    /// An object is picked.
    pub const PICKED: u8 = 1 << 5;

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        for v in [self.frame, self.count, self.sent, self.leaves, self.nodes] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&[self.depth, self.flags, 0, 0]);
        out.extend_from_slice(&self.pairs.to_le_bytes());
        out.extend_from_slice(&self.checks.to_le_bytes());
        out.extend_from_slice(&self.candidates.to_le_bytes());
        for v in [
            self.colliding,
            self.query_hits,
            self.player_candidates,
            self.player_contacts,
            self.picked,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [
            self.picked_distance,
            self.update_ms,
            self.pairs_ms,
            self.sim_fps,
            self.player.x,
            self.player.y,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.dropped.to_le_bytes());
    }

    fn read(b: &[u8]) -> Result<Header, String> {
        if b.len() < HEADER_LEN {
            return Err(format!(
                "a frame needs {HEADER_LEN} header bytes, got {}",
                b.len()
            ));
        }
        if b[..4] != MAGIC {
            return Err("not a lab frame (bad magic)".to_owned());
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let f32_at = |o: usize| f32::from_bits(u32_at(o));
        Ok(Header {
            frame: u32_at(4),
            count: u32_at(8),
            sent: u32_at(12),
            leaves: u32_at(16),
            nodes: u32_at(20),
            depth: b[24],
            flags: b[25],
            pairs: u32_at(28),
            checks: u64_at(32),
            candidates: u64_at(40),
            colliding: u32_at(48),
            query_hits: u32_at(52),
            player_candidates: u32_at(56),
            player_contacts: u32_at(60),
            picked: u32_at(64),
            picked_distance: f32_at(68),
            update_ms: f32_at(72),
            pairs_ms: f32_at(76),
            sim_fps: f32_at(80),
            player: Vec2::new(f32_at(84), f32_at(88)),
            dropped: u32_at(92),
        })
    }
}

/// What the connection adds to a frame: its number, pause state and rates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameInfo {
    /// Frame number.
    pub frame: u32,
    /// The objects are paused.
    pub paused: bool,
    /// Simulation ticks per second.
    pub sim_fps: f32,
    /// Frames dropped so far.
    pub dropped: u32,
}

/// One object as a frame carries it (dequantized).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Object {
    /// Centre.
    pub center: Vec2,
    /// Half width and half height.
    pub half: Vec2,
    /// What it is this tick.
    pub marks: Marks,
}

/// A decoded frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// The header.
    pub header: Header,
    /// The objects, the player last (empty when omitted).
    pub objects: Vec<Object>,
    /// The leaves' cells.
    pub leaves: Vec<Aabb>,
}

/// Writes the frame of `sim`'s last tick into `out` (cleared first).
pub fn encode(sim: &Simulation, info: FrameInfo, out: &mut Vec<u8>) {
    let figures = sim.figures();
    let (positions, shapes, marks) = (sim.positions(), sim.shapes(), sim.marks());
    let send_objects = sim.count() <= OBJECT_LIMIT;
    let sent = if send_objects { positions.len() } else { 0 };
    let all_leaves = sim.tree().nodes().filter(|n| n.is_leaf).count();
    let leaves = all_leaves.min(LEAF_LIMIT);
    let settings = sim.settings();
    let (picked, picked_distance) = sim.picked().unwrap_or((u32::MAX, 0.0));

    let mut flags = 0;
    for (on, bit) in [
        (info.paused, Header::PAUSED),
        (
            settings.broad_phase == crate::sim::BroadPhase::BruteForce,
            Header::BRUTE_FORCE,
        ),
        (!send_objects, Header::OBJECTS_OMITTED),
        (leaves < all_leaves, Header::LEAVES_TRUNCATED),
        (sim.query().is_some(), Header::QUERY),
        (sim.picked().is_some(), Header::PICKED),
    ] {
        if on {
            flags |= bit;
        }
    }
    let header = Header {
        frame: info.frame,
        count: sim.count() as u32,
        sent: sent as u32,
        leaves: leaves as u32,
        nodes: figures.nodes,
        depth: figures.depth,
        flags,
        pairs: figures.pairs,
        checks: figures.checks,
        candidates: figures.candidates,
        colliding: figures.colliding,
        query_hits: figures.query_hits,
        player_candidates: figures.player_candidates,
        player_contacts: figures.player_contacts,
        picked,
        picked_distance,
        update_ms: figures.update.as_secs_f32() * 1e3,
        pairs_ms: figures.pair_time.as_secs_f32() * 1e3,
        sim_fps: info.sim_fps,
        player: sim.player(),
        dropped: info.dropped,
    };

    out.clear();
    out.reserve(HEADER_LEN + 9 * sent + 8 * leaves);
    header.write(out);
    let mut put = |values: [f32; 4]| {
        for v in values {
            out.extend_from_slice(&quantize(v).to_le_bytes());
        }
    };
    for (p, shape) in positions.iter().zip(shapes).take(sent) {
        let half = match *shape {
            Shape::Circle { radius } => Vec2::splat(radius),
            _ => shape.aabb(*p).size() * 0.5,
        };
        put([p.x, p.y, half.x, half.y]);
    }
    for node in sim.tree().nodes().filter(|n| n.is_leaf).take(leaves) {
        let b = node.bounds;
        put([b.min.x, b.min.y, b.max.x, b.max.y]);
    }
    out.extend(marks.iter().take(sent).map(|m| m.0));
}

/// Reads a frame back; the inverse of [`encode`] up to quantization.
pub fn decode(bytes: &[u8]) -> Result<Frame, String> {
    let header = Header::read(bytes)?;
    let (sent, leaves) = (header.sent as usize, header.leaves as usize);
    // In `u64`: where `usize` has 32 bits, the counts a header can claim
    // would overflow it.
    let len = HEADER_LEN as u64 + 9 * u64::from(header.sent) + 8 * u64::from(header.leaves);
    if bytes.len() as u64 != len {
        return Err(format!(
            "a frame with {sent} objects and {leaves} leaves has {len} bytes, got {}",
            bytes.len()
        ));
    }
    let quad = |i: usize| {
        let at = |k: usize| {
            let o = HEADER_LEN + 8 * i + 2 * k;
            dequantize(u16::from_le_bytes([bytes[o], bytes[o + 1]]))
        };
        [at(0), at(1), at(2), at(3)]
    };
    let marks_at = HEADER_LEN + 8 * (sent + leaves);
    let objects = (0..sent)
        .map(|i| {
            let [x, y, hx, hy] = quad(i);
            Object {
                center: Vec2::new(x, y),
                half: Vec2::new(hx, hy),
                marks: Marks(bytes[marks_at + i]),
            }
        })
        .collect();
    let leaves = (sent..sent + leaves)
        .map(|i| {
            let [x0, y0, x1, y1] = quad(i);
            Aabb::new([x0, y0], [x1, y1])
        })
        .collect();
    Ok(Frame {
        header,
        objects,
        leaves,
    })
}

/// A world coordinate as a `u16`.
#[must_use]
pub fn quantize(v: f32) -> u16 {
    (v * 65535.0 / WORLD).round().clamp(0.0, 65535.0) as u16
}

/// A `u16` back as a world coordinate.
#[must_use]
pub fn dequantize(q: u16) -> f32 {
    f32::from(q) * WORLD / 65535.0
}
