//! The binary frames the server sends the page, one per published tick.
//!
//! A frame is a fixed header of figures, then sections that carry the
//! objects, the tree's leaves and the level's tiles. Most of what a frame
//! carries changes little from one frame to the next, so a frame says only
//! what changed since the frame before it on the same connection, and the
//! page keeps the whole picture ([`Decoder`] here, `decode` in the page's
//! `app.js`, which must stay in step with this file). The first frame of a
//! connection is a *key frame* ([`Header::KEY`]): everything, against
//! nothing. The server publishes a frame only once the page has taken the
//! one before it (see `session.rs`), so no frame the page has not seen
//! can be the base of another.
//!
//! All numbers are little-endian. Coordinates are quantized to `u16` over
//! the world's side: `q = round(v · 65535 / WORLD)`, clamped to
//! `0..=65535` (a step of 0.015 world units). A *varint* is LEB128: seven
//! bits a byte, low first, the top bit set on every byte but the last.
//!
//! The header ([`HEADER_LEN`] bytes):
//!
//! | offset | type | field |
//! |---:|---|---|
//! | 0 | `[u8; 4]` | magic `QLF2` |
//! | 4 | `u32` | frame number (1, 2, … per connection) |
//! | 8 | `u32` | objects simulated (the player not included) |
//! | 12 | `u32` | object records: objects + player, every one |
//! | 16 | `u32` | the tree's leaves (0 in brute-force mode: no tree is kept) |
//! | 20 | `u32` | nodes of the tree |
//! | 24 | `u8` | depth of the tree |
//! | 25 | `u8` | flags: [`Header::PAUSED`], [`Header::BRUTE_FORCE`], … |
//! | 26 | `u8` | sections: [`Header::KEY`], [`Header::SIZES`], [`Header::TREE`], [`Header::TILES`] |
//! | 27 | `u8` | reserved (0) |
//! | 28 | `u32` | touching pairs (exact test) |
//! | 32 | `u64` | box tests of the broad phase (the tree's walk, or every pair) |
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
//! | 92 | `u32` | ticks not sent so far on this connection: the page (or the network) was still busy with the frame before |
//! | 96 | `u64` | the tree's walk: box tests ([`quadrat::PairStats`]) |
//! | 104 | `u64` | the tree's walk: bound tests |
//! | 112 | `u64` | sort-and-sweep: box tests |
//! | 120 | `u64` | brute force: box tests, `n (n − 1) / 2` |
//! | 128 | `f32` | the tree's walk, ms |
//! | 132 | `f32` | sort-and-sweep, ms |
//! | 136 | `f32` | brute force, ms (estimated from a sample when [`Header::BRUTE_ESTIMATED`]) |
//! | 140 | `f32` | exact tests, ms |
//! | 144 | `u32` | level: bodies moved since the last step |
//! | 148 | `u32` | level: pairs the step examined |
//! | 152 | `u32` | level: exact tests the step ran |
//! | 156 | `u32` | level: static tiles |
//! | 160 | `u32` | level: version of the tiles (0 outside the level) |
//! | 164 | `u32` | level: tiles touched this tick |
//!
//! Then the sections, in this order (`N` object records, `L` leaves):
//!
//! 1. **Positions.** In a key frame, `N × [u16; 2]`: centre x and y. Else
//!    each object's move (in quantization steps) is coded against its move
//!    in the frame before (zero after a key frame): objects keep their
//!    velocity between bounces, so the change is mostly -1, 0 or 1 on each
//!    axis, from rounding. A varint `E`, then `E ×` (varint index, `u16` x,
//!    `u16` y): the objects whose change is larger, with their position;
//!    then `⌈N/2⌉` bytes of two 4-bit codes each (object `2k` in the low
//!    bits): `(cx + 1) + 3 (cy + 1)` for a change `(cx, cy)`, or 15 for an
//!    object listed before.
//! 2. **Sizes**, when [`Header::SIZES`] (key frames, and whenever a size
//!    changed): `N × [u16; 2]`, half width and half height.
//! 3. **Marks**: a byte, 0 for all of them (`N` bytes, the
//!    [`Marks`] bits), or 1 for the changed ones only: a varint `M`, then
//!    `M ×` (varint gap from the previous changed index + 1, byte).
//! 4. **Tree**, when [`Header::TREE`] (key frames, and whenever the tree's
//!    shape changed): a varint `P`, the nodes in pre-order, then `⌈P/8⌉`
//!    bytes of one bit each (low bit first): 1 for a node split into four
//!    children (in the order x low then high, first at low y), 0 for a
//!    leaf. The root's cell is the world; the leaves' cells and depths
//!    follow.
//! 5. **Leaf items**, unless in brute-force mode: a byte, 0 for all (`L`
//!    varints) or 1 for the changed ones (as marks, with varint values),
//!    or 2 for none changed.
//! 6. **Tiles**, when [`Header::TILES`] (a key frame in the level, and a new
//!    version): a varint `K`, then `K × [u16; 4]`: centre x, centre y, half
//!    width, half height of each tile.
//! 7. **Touched tiles**: the header's count of varint gaps (index − previous
//!    index − 1, from −1), in increasing order.
//!
//! The player is the last object record.

use quadrat::{Aabb, Shape, Vec2};

use crate::sim::{BroadPhase, Marks, Simulation, WORLD};

/// Size of the header in bytes.
pub const HEADER_LEN: usize = 168;

/// The move code of an object listed with its absolute position.
const FAR: u8 = 15;

/// The most records of any kind a frame may announce: well above what the
/// lab makes (100,000 objects, a million tiles), and a bound a decoder
/// checks before it allocates.
pub const RECORD_LIMIT: u32 = 1 << 24;

const MAGIC: [u8; 4] = *b"QLF2";

/// What a frame says besides the objects, nodes and tiles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Header {
    /// Frame number, counting from 1 on each connection.
    pub frame: u32,
    /// Objects simulated, the player not included.
    pub count: u32,
    /// Object records in the frame: every object and the player.
    pub sent: u32,
    /// The tree's leaves.
    pub leaves: u32,
    /// Nodes of the tree.
    pub nodes: u32,
    /// Depth of the tree.
    pub depth: u8,
    /// [`Header::PAUSED`] and the other flag bits.
    pub flags: u8,
    /// Which sections the frame carries: [`Header::KEY`] and the others.
    pub sections: u8,
    /// Touching pairs.
    pub pairs: u32,
    /// Box tests of the broad phase.
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
    /// Ticks not sent so far on this connection.
    pub dropped: u32,
    /// Box tests of the tree's pair walk.
    pub tree_tests: u64,
    /// Bound tests of the tree's pair walk.
    pub tree_bound_tests: u64,
    /// Box tests of a sort-and-sweep over every box.
    pub sweep_tests: u64,
    /// Box tests of brute force.
    pub brute_tests: u64,
    /// Time of the tree's pair walk, ms.
    pub tree_ms: f32,
    /// Time of the sort-and-sweep, ms.
    pub sweep_ms: f32,
    /// Time of brute force, ms (estimated with [`Header::BRUTE_ESTIMATED`]).
    pub brute_ms: f32,
    /// Time of the exact tests, ms.
    pub exact_ms: f32,
    /// Level: bodies moved since the last step.
    pub moved: u32,
    /// Level: pairs the step examined.
    pub step_candidates: u32,
    /// Level: exact tests the step ran.
    pub step_exact: u32,
    /// Level: static tiles.
    pub tiles: u32,
    /// Level: version of the tiles, 0 outside the level.
    pub tiles_version: u32,
    /// Level: tiles touched this tick.
    pub touched: u32,
}

impl Header {
    /// The objects are paused.
    pub const PAUSED: u8 = 1 << 0;
    /// Pairs come from brute force (no tree is kept).
    pub const BRUTE_FORCE: u8 = 1 << 1;
    /// No longer set: every object is sent at every count.
    pub const OBJECTS_OMITTED: u8 = 1 << 2;
    /// No longer set: every leaf is sent.
    pub const LEAVES_TRUNCATED: u8 = 1 << 3;
    /// A query rectangle is set.
    pub const QUERY: u8 = 1 << 4;
    /// An object is picked.
    pub const PICKED: u8 = 1 << 5;
    /// Brute force's time is estimated from a sample of its rows.
    pub const BRUTE_ESTIMATED: u8 = 1 << 6;
    /// The level scene: its step took the full pass over the tree.
    pub const FULL_PASS: u8 = 1 << 7;

    /// Section bit: a key frame, against nothing.
    pub const KEY: u8 = 1 << 0;
    /// Section bit: the sizes are sent.
    pub const SIZES: u8 = 1 << 1;
    /// Section bit: the tree's shape is sent.
    pub const TREE: u8 = 1 << 2;
    /// Section bit: the level's tiles are sent.
    pub const TILES: u8 = 1 << 3;

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        for v in [self.frame, self.count, self.sent, self.leaves, self.nodes] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&[self.depth, self.flags, self.sections, 0]);
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
        for v in [
            self.tree_tests,
            self.tree_bound_tests,
            self.sweep_tests,
            self.brute_tests,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [self.tree_ms, self.sweep_ms, self.brute_ms, self.exact_ms] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [
            self.moved,
            self.step_candidates,
            self.step_exact,
            self.tiles,
            self.tiles_version,
            self.touched,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
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
            sections: b[26],
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
            tree_tests: u64_at(96),
            tree_bound_tests: u64_at(104),
            sweep_tests: u64_at(112),
            brute_tests: u64_at(120),
            tree_ms: f32_at(128),
            sweep_ms: f32_at(132),
            brute_ms: f32_at(136),
            exact_ms: f32_at(140),
            moved: u32_at(144),
            step_candidates: u32_at(148),
            step_exact: u32_at(152),
            tiles: u32_at(156),
            tiles_version: u32_at(160),
            touched: u32_at(164),
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
    /// Ticks not sent so far.
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

/// One leaf of the tree as a frame carries it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leaf {
    /// The leaf's cell (dequantized).
    pub cell: Aabb,
    /// Its depth; the root is 0.
    pub depth: u8,
    /// How many items the leaf stores.
    pub items: u32,
}

/// A decoded frame: the whole picture after it, not only what it changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// The header.
    pub header: Header,
    /// The objects, the player last.
    pub objects: Vec<Object>,
    /// The tree's leaves, in pre-order.
    pub leaves: Vec<Leaf>,
    /// The level's tiles (centre and half size, dequantized), empty
    /// outside the level.
    pub tiles: Vec<(Vec2, Vec2)>,
    /// The tiles some body touches this tick, in increasing order.
    pub touched: Vec<u32>,
}

/// What the last frame on a connection carried, quantized: what the next
/// frame is coded against.
#[derive(Clone, Debug, Default, PartialEq)]
struct Picture {
    positions: Vec<[u16; 2]>,
    /// How far each object moved in the frame before (zero after a key
    /// frame): the next move is coded as the change from it.
    steps: Vec<[i32; 2]>,
    sizes: Vec<[u16; 2]>,
    marks: Vec<u8>,
    /// The tree's shape: one bit a node, in pre-order.
    shape: Vec<bool>,
    leaf_items: Vec<u32>,
    tiles_version: u32,
    tiles: Vec<[u16; 4]>,
    touched: Vec<u32>,
}

/// Writes the frames of one connection: each says what changed since the
/// one before. The first is a key frame.
#[derive(Clone, Debug, Default)]
pub struct Encoder {
    last: Option<Picture>,
    next: Picture,
}

impl Encoder {
    /// An encoder whose next frame is a key frame.
    #[must_use]
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// Writes the frame of `sim`'s last tick into `out` (cleared first),
    /// coded against the frame this encoder wrote before (the page must
    /// have received that one).
    pub fn encode(&mut self, sim: &Simulation, info: FrameInfo, out: &mut Vec<u8>) {
        let figures = sim.figures();
        let compare = figures.compare;
        let level = figures.level;
        let brute = !sim.tree_kept();
        let settings = sim.settings();
        let (picked, picked_distance) = sim.picked().unwrap_or((u32::MAX, 0.0));
        let (tiles, tiles_version) = sim.tiles();
        let touched = sim.touched_tiles();

        // This frame's picture.
        let next = &mut self.next;
        next.positions.clear();
        next.positions.extend(
            sim.positions()
                .iter()
                .map(|p| [quantize(p.x), quantize(p.y)]),
        );
        next.sizes.clear();
        next.sizes
            .extend(sim.shapes().iter().zip(sim.positions()).map(|(shape, p)| {
                let half = match *shape {
                    Shape::Circle { radius } => Vec2::splat(radius),
                    _ => shape.aabb(*p).size() * 0.5,
                };
                [quantize(half.x), quantize(half.y)]
            }));
        next.marks.clear();
        next.marks.extend(sim.marks().iter().map(|m| m.0));
        next.shape.clear();
        next.leaf_items.clear();
        let mut depth = 0;
        if !brute {
            for node in sim.tree().nodes() {
                depth = depth.max(node.depth);
                next.shape.push(!node.is_leaf);
                if node.is_leaf {
                    next.leaf_items.push(node.items as u32);
                }
            }
        }
        next.tiles_version = tiles_version;
        if self.last.as_ref().map(|l| l.tiles_version) != Some(tiles_version) {
            next.tiles.clear();
            next.tiles.extend(tiles.iter().map(|b| {
                let (c, h) = (b.center(), b.size() * 0.5);
                [quantize(c.x), quantize(c.y), quantize(h.x), quantize(h.y)]
            }));
        } else if let Some(last) = &mut self.last {
            // Unchanged: taken over rather than quantized again.
            std::mem::swap(&mut next.tiles, &mut last.tiles);
        }
        next.touched.clear();
        next.touched.extend_from_slice(touched);

        let last = self.last.as_ref();
        let key = last.is_none_or(|l| l.positions.len() != next.positions.len());
        let last = if key { None } else { last };
        let sizes = last.is_none_or(|l| l.sizes != next.sizes);
        let tree = !brute && last.is_none_or(|l| l.shape != next.shape);
        let send_tiles =
            tiles_version != 0 && last.is_none_or(|l| l.tiles_version != tiles_version);

        let mut flags = 0;
        for (on, bit) in [
            (info.paused, Header::PAUSED),
            (
                settings.broad_phase == BroadPhase::BruteForce,
                Header::BRUTE_FORCE,
            ),
            (sim.query().is_some(), Header::QUERY),
            (sim.picked().is_some(), Header::PICKED),
            (compare.brute_estimated, Header::BRUTE_ESTIMATED),
            (level.full_pass, Header::FULL_PASS),
        ] {
            if on {
                flags |= bit;
            }
        }
        let mut sections = 0;
        for (on, bit) in [
            (key, Header::KEY),
            (sizes, Header::SIZES),
            (tree, Header::TREE),
            (send_tiles, Header::TILES),
        ] {
            if on {
                sections |= bit;
            }
        }
        let ms = |d: std::time::Duration| d.as_secs_f32() * 1e3;
        let header = Header {
            frame: info.frame,
            count: sim.count() as u32,
            sent: next.positions.len() as u32,
            leaves: next.leaf_items.len() as u32,
            nodes: figures.nodes,
            depth,
            flags,
            sections,
            pairs: figures.pairs,
            checks: figures.checks,
            candidates: figures.candidates,
            colliding: figures.colliding,
            query_hits: figures.query_hits,
            player_candidates: figures.player_candidates,
            player_contacts: figures.player_contacts,
            picked,
            picked_distance,
            update_ms: ms(figures.update),
            pairs_ms: ms(figures.pair_time),
            sim_fps: info.sim_fps,
            player: sim.player(),
            dropped: info.dropped,
            tree_tests: compare.tree.box_tests,
            tree_bound_tests: compare.tree.bound_tests,
            sweep_tests: compare.sweep_tests,
            brute_tests: compare.brute_tests,
            tree_ms: ms(compare.tree_time),
            sweep_ms: ms(compare.sweep_time),
            brute_ms: ms(compare.brute_time),
            exact_ms: ms(figures.exact_time),
            moved: level.moved,
            step_candidates: level.candidates,
            step_exact: level.exact_tests,
            tiles: level.tiles,
            tiles_version,
            touched: touched.len() as u32,
        };

        out.clear();
        header.write(out);
        // 1. Positions.
        match last {
            None => {
                for [x, y] in &next.positions {
                    out.extend_from_slice(&x.to_le_bytes());
                    out.extend_from_slice(&y.to_le_bytes());
                }
            }
            Some(last) => {
                // Objects keep their velocity between bounces, so a move is
                // nearly the move before: code the change, -1, 0 or 1 on each
                // axis (rounding), as 4 bits; anything else is listed.
                let mut codes = Vec::with_capacity(next.positions.len());
                let mut far = Vec::new();
                next.steps.clear();
                for (i, ([x, y], ([px, py], [sx, sy]))) in next
                    .positions
                    .iter()
                    .zip(last.positions.iter().zip(&last.steps))
                    .enumerate()
                {
                    let d = [
                        i32::from(*x) - i32::from(*px),
                        i32::from(*y) - i32::from(*py),
                    ];
                    let r = [d[0] - sx, d[1] - sy];
                    if r.iter().all(|v| (-1..=1).contains(v)) {
                        codes.push(((r[0] + 1) + 3 * (r[1] + 1)) as u8);
                    } else {
                        codes.push(FAR);
                        far.push(i);
                    }
                    next.steps.push(d);
                }
                varint(out, far.len() as u64);
                for &i in &far {
                    varint(out, i as u64);
                    let [x, y] = next.positions[i];
                    out.extend_from_slice(&x.to_le_bytes());
                    out.extend_from_slice(&y.to_le_bytes());
                }
                out.extend(
                    codes
                        .chunks(2)
                        .map(|c| c[0] | c.get(1).map_or(0, |h| h << 4)),
                );
            }
        }
        if key {
            next.steps.clear();
            next.steps.resize(next.positions.len(), [0, 0]);
        }
        // 2. Sizes.
        if sizes {
            for [w, h] in &next.sizes {
                out.extend_from_slice(&w.to_le_bytes());
                out.extend_from_slice(&h.to_le_bytes());
            }
        }
        // 3. Marks.
        let marks: Vec<u32> = next.marks.iter().map(|&m| u32::from(m)).collect();
        let last_marks: Option<Vec<u32>> =
            last.map(|l| l.marks.iter().map(|&m| u32::from(m)).collect());
        match changes(&marks, last_marks.as_deref()) {
            Some(changed) if 2 * changed.len() < marks.len() => {
                out.push(1);
                write_changes(out, &changed, |out, v| out.push(v as u8));
            }
            _ => {
                out.push(0);
                out.extend_from_slice(&next.marks);
            }
        }
        // 4. The tree's shape.
        if tree {
            varint(out, next.shape.len() as u64);
            for chunk in next.shape.chunks(8) {
                out.push(
                    chunk
                        .iter()
                        .enumerate()
                        .fold(0u8, |b, (k, &split)| b | (u8::from(split) << k)),
                );
            }
        }
        // 5. Leaf items.
        if !brute {
            let base = if tree {
                None
            } else {
                last.map(|l| &l.leaf_items[..])
            };
            match changes(&next.leaf_items, base) {
                Some(changed) if changed.is_empty() => out.push(2),
                Some(changed) if 3 * changed.len() < next.leaf_items.len() => {
                    out.push(1);
                    write_changes(out, &changed, |out, v| varint(out, u64::from(v)));
                }
                _ => {
                    out.push(0);
                    for &n in &next.leaf_items {
                        varint(out, u64::from(n));
                    }
                }
            }
        }
        // 6. Tiles.
        if send_tiles {
            varint(out, next.tiles.len() as u64);
            for tile in &next.tiles {
                for v in tile {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        // 7. Touched tiles.
        let mut previous = -1i64;
        for &t in &next.touched {
            varint(out, (i64::from(t) - previous - 1) as u64);
            previous = i64::from(t);
        }

        let mut next = std::mem::take(&mut self.next);
        if let Some(mut last) = self.last.take() {
            // Reuse the old picture's buffers for the frame after.
            std::mem::swap(&mut self.next, &mut last);
        }
        next.tiles_version = tiles_version;
        self.last = Some(next);
    }
}

/// `(index, value)` of every entry of `now` that differs from `was`;
/// `None` without a base of the same length.
fn changes(now: &[u32], was: Option<&[u32]>) -> Option<Vec<(usize, u32)>> {
    let was = was.filter(|w| w.len() == now.len())?;
    Some(
        now.iter()
            .zip(was)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (&a, _))| (i, a))
            .collect(),
    )
}

fn write_changes(out: &mut Vec<u8>, changed: &[(usize, u32)], value: impl Fn(&mut Vec<u8>, u32)) {
    varint(out, changed.len() as u64);
    let mut previous = -1i64;
    for &(i, v) in changed {
        varint(out, (i as i64 - previous - 1) as u64);
        previous = i as i64;
        value(out, v);
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads frames back, keeping the picture between them: the inverse of
/// [`Encoder`] up to quantization.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    picture: Option<Picture>,
}

/// A cursor over a frame's bytes; every read checks the length.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("the frame ends early, at byte {}", self.bytes.len()))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 64 bits".to_owned())
    }

    /// A count no larger than `limit`.
    fn count(&mut self, limit: usize, what: &str) -> Result<usize, String> {
        let v = self.varint()?;
        if v > limit as u64 {
            return Err(format!("{what}: {v} is more than {limit}"));
        }
        Ok(v as usize)
    }

    /// Changes as [`write_changes`] writes them, applied to `to`.
    fn changes(
        &mut self,
        to: &mut [u32],
        mut value: impl FnMut(&mut Self) -> Result<u32, String>,
    ) -> Result<(), String> {
        let m = self.count(to.len(), "changed entries")?;
        let mut i = -1i64;
        for _ in 0..m {
            i += 1 + self.count(to.len(), "a gap")? as i64;
            let v = value(self)?;
            let len = to.len();
            *to.get_mut(i as usize)
                .ok_or_else(|| format!("changed entry {i} of {len}"))? = v;
        }
        Ok(())
    }
}

impl Decoder {
    /// A decoder that expects a key frame first.
    #[must_use]
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Reads the next frame of the connection. A refused frame leaves the
    /// decoder as it was.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<Frame, String> {
        let header = Header::read(bytes)?;
        let key = header.sections & Header::KEY != 0;
        let mut pic = match (&self.picture, key) {
            (_, true) => Picture::default(),
            (Some(p), false) => p.clone(),
            (None, false) => return Err("a frame without its base: a key frame comes first".into()),
        };
        for (what, n) in [
            ("object records", header.sent),
            ("leaves", header.leaves),
            ("touched tiles", header.touched),
        ] {
            if n > RECORD_LIMIT {
                return Err(format!("{what}: {n} is more than {RECORD_LIMIT}"));
            }
        }
        let n = header.sent as usize;
        if !key && pic.positions.len() != n {
            return Err(format!(
                "{n} object records against a base of {}",
                pic.positions.len()
            ));
        }
        let mut r = Reader {
            bytes,
            at: HEADER_LEN,
        };
        // 1. Positions.
        if key {
            if bytes.len() < HEADER_LEN + 4 * n {
                return Err(format!(
                    "{n} object records do not fit in {} bytes",
                    bytes.len()
                ));
            }
            pic.positions = (0..n)
                .map(|_| Ok([r.u16()?, r.u16()?]))
                .collect::<Result<_, String>>()?;
            pic.steps = vec![[0, 0]; n];
        } else {
            let far = r.count(n, "far moves")?;
            let mut listed = vec![None; n];
            for _ in 0..far {
                let i = r.count(n.saturating_sub(1), "a far move's index")?;
                listed[i] = Some([r.u16()?, r.u16()?]);
            }
            let codes = r.take(n.div_ceil(2))?;
            for i in 0..n {
                let code = codes[i / 2] >> (4 * (i % 2)) & 15;
                let was = pic.positions[i];
                let now = match (code, listed[i]) {
                    (FAR, Some(p)) => p,
                    (0..=8, None) => {
                        let (rx, ry) = (i32::from(code % 3) - 1, i32::from(code / 3) - 1);
                        let [sx, sy] = pic.steps[i];
                        let at = |q: u16, d: i32| (i32::from(q) + d).clamp(0, 65535) as u16;
                        [at(was[0], sx + rx), at(was[1], sy + ry)]
                    }
                    _ => return Err(format!("object {i}: move code {code} does not fit")),
                };
                pic.steps[i] = [
                    i32::from(now[0]) - i32::from(was[0]),
                    i32::from(now[1]) - i32::from(was[1]),
                ];
                pic.positions[i] = now;
            }
        }
        // 2. Sizes.
        if header.sections & Header::SIZES != 0 {
            pic.sizes = (0..n)
                .map(|_| Ok([r.u16()?, r.u16()?]))
                .collect::<Result<_, String>>()?;
        } else if key {
            return Err("a key frame without sizes".to_owned());
        }
        // 3. Marks.
        match r.u8()? {
            0 => pic.marks = r.take(n)?.to_vec(),
            1 if !key => {
                let mut marks: Vec<u32> = pic.marks.iter().map(|&m| u32::from(m)).collect();
                r.changes(&mut marks, |r| r.u8().map(u32::from))?;
                pic.marks = marks.into_iter().map(|m| m as u8).collect();
            }
            mode => return Err(format!("marks: unknown mode {mode}")),
        }
        // 4. The tree's shape.
        let brute = header.flags & Header::BRUTE_FORCE != 0;
        if header.sections & Header::TREE != 0 {
            let p = r.count(4 * RECORD_LIMIT as usize + 1, "nodes")?;
            let bits = r.take(p.div_ceil(8))?;
            pic.shape = (0..p).map(|k| bits[k / 8] >> (k % 8) & 1 == 1).collect();
            pic.leaf_items.clear();
        } else if brute {
            pic.shape.clear();
            pic.leaf_items.clear();
        } else if key {
            return Err("a key frame without the tree".to_owned());
        }
        let cells = if brute {
            Vec::new()
        } else {
            leaf_cells(&pic.shape)?
        };
        if cells.len() != header.leaves as usize {
            return Err(format!(
                "the tree has {} leaves, the header says {}",
                cells.len(),
                header.leaves
            ));
        }
        // 5. Leaf items.
        if !brute {
            let l = cells.len();
            match r.u8()? {
                0 => {
                    pic.leaf_items = (0..l)
                        .map(|_| r.varint().map(|v| v as u32))
                        .collect::<Result<_, String>>()?;
                }
                mode @ (1 | 2) if pic.leaf_items.len() == l => {
                    if mode == 1 {
                        r.changes(&mut pic.leaf_items, |r| r.varint().map(|v| v as u32))?;
                    }
                }
                mode => return Err(format!("leaf items: mode {mode} without a base")),
            }
        }
        // 6. Tiles.
        if header.sections & Header::TILES != 0 {
            let k = r.count(RECORD_LIMIT as usize, "tiles")?;
            if r.bytes.len() - r.at < 8 * k {
                return Err(format!("{k} tiles do not fit in the frame"));
            }
            pic.tiles = (0..k)
                .map(|_| Ok([r.u16()?, r.u16()?, r.u16()?, r.u16()?]))
                .collect::<Result<_, String>>()?;
            pic.tiles_version = header.tiles_version;
        } else if header.tiles_version != pic.tiles_version {
            if header.tiles_version != 0 {
                return Err("new tiles without the tiles".to_owned());
            }
            pic.tiles.clear();
            pic.tiles_version = 0;
        }
        // 7. Touched tiles.
        let mut touched = Vec::with_capacity((header.touched as usize).min(bytes.len()));
        let mut previous = -1i64;
        for _ in 0..header.touched {
            let t = previous + 1 + r.count(pic.tiles.len(), "a touched tile's gap")? as i64;
            if t as usize >= pic.tiles.len() {
                return Err(format!("touched tile {t} of {}", pic.tiles.len()));
            }
            touched.push(t as u32);
            previous = t;
        }
        if r.at != bytes.len() {
            return Err(format!(
                "{} bytes after the frame's last section",
                bytes.len() - r.at
            ));
        }

        let objects = (0..n)
            .map(|i| {
                let ([x, y], [hx, hy]) = (pic.positions[i], pic.sizes[i]);
                Object {
                    center: Vec2::new(dequantize(x), dequantize(y)),
                    half: Vec2::new(dequantize(hx), dequantize(hy)),
                    marks: Marks(pic.marks[i]),
                }
            })
            .collect();
        let leaves = cells
            .into_iter()
            .zip(&pic.leaf_items)
            .map(|((cell, depth), &items)| Leaf { cell, depth, items })
            .collect();
        let tiles = pic
            .tiles
            .iter()
            .map(|&[x, y, hx, hy]| {
                (
                    Vec2::new(dequantize(x), dequantize(y)),
                    Vec2::new(dequantize(hx), dequantize(hy)),
                )
            })
            .collect();
        touched.shrink_to_fit();
        self.picture = Some(pic);
        Ok(Frame {
            header,
            objects,
            leaves,
            tiles,
            touched,
        })
    }
}

/// The leaves' cells and depths of a tree of this shape (one bit a node in
/// pre-order, `true` for a split node) over the world, or why the shape is
/// not a tree.
fn leaf_cells(shape: &[bool]) -> Result<Vec<(Aabb, u8)>, String> {
    let mut out = Vec::new();
    let mut stack = vec![(Aabb::new([0.0, 0.0], [WORLD, WORLD]), 0u8)];
    let mut k = 0;
    while let Some((cell, depth)) = stack.pop() {
        let Some(&split) = shape.get(k) else {
            return Err("the tree's shape ends early".to_owned());
        };
        k += 1;
        if split {
            if depth >= quadrat::MAX_DEPTH {
                return Err("the tree's shape is deeper than any tree".to_owned());
            }
            let mid = cell.center();
            for q in (0..4).rev() {
                let (x0, x1) = if q & 1 == 0 {
                    (cell.min.x, mid.x)
                } else {
                    (mid.x, cell.max.x)
                };
                let (y0, y1) = if q & 2 == 0 {
                    (cell.min.y, mid.y)
                } else {
                    (mid.y, cell.max.y)
                };
                stack.push((Aabb::new([x0, y0], [x1, y1]), depth + 1));
            }
        } else {
            out.push((cell, depth));
        }
    }
    if k != shape.len() {
        return Err(format!("{} bits after the tree's shape", shape.len() - k));
    }
    Ok(out)
}

/// Writes a key frame of `sim`'s last tick into `out` (cleared first): what
/// a new connection's first frame is.
pub fn encode(sim: &Simulation, info: FrameInfo, out: &mut Vec<u8>) {
    Encoder::new().encode(sim, info, out);
}

/// Reads a key frame on its own: [`Decoder::decode`] with no frame before.
pub fn decode(bytes: &[u8]) -> Result<Frame, String> {
    Decoder::new().decode(bytes)
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
