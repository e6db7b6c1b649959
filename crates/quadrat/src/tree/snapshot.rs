//! Snapshots (feature `serde`): a tree serializes completely, its layout
//! included, so that a restored copy behaves exactly as the original, and
//! a snapshot is checked in full before it is trusted.
//!
//! Boxes inside nodes and entries are written as the bits of their `f32`
//! coordinates: exact, and able to carry the infinities of empty bounds,
//! which formats such as JSON cannot write as numbers.

use serde::de::Error as _;
use serde::ser::{Error as _, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Config, Entry, Geo, NONE, Node, QuadTree};
use crate::geom::{Aabb, Vec2};
use crate::key::{Place, Slab, Slot};
use core::num::NonZeroU32;

type Bits = [u32; 4];

fn bits(b: &Aabb) -> Bits {
    [
        b.min.x.to_bits(),
        b.min.y.to_bits(),
        b.max.x.to_bits(),
        b.max.y.to_bits(),
    ]
}

fn from_bits(b: Bits) -> Aabb {
    Aabb {
        min: Vec2::new(f32::from_bits(b[0]), f32::from_bits(b[1])),
        max: Vec2::new(f32::from_bits(b[2]), f32::from_bits(b[3])),
    }
}

/// A node as a tuple: cell, loose, children, start, len, cap, load, tight,
/// below, parent, depth, edges.
type NodeTuple = (Bits, Bits, u32, u32, u32, u32, u32, Bits, Bits, u32, u8, u8);

/// The nodes with their geometry, written as one sequence of
/// [`NodeTuple`]s.
struct NodesOut<'a> {
    nodes: &'a [Node],
    geo: &'a [Geo],
}

impl Serialize for NodesOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.nodes.len() != self.geo.len() {
            return Err(S::Error::custom(format!(
                "{} nodes but geometry for {}",
                self.nodes.len(),
                self.geo.len()
            )));
        }
        s.collect_seq(self.nodes.iter().zip(self.geo).map(|(n, g)| {
            let t: NodeTuple = (
                bits(&g.cell),
                bits(&g.loose),
                n.children,
                n.start,
                n.len,
                n.cap,
                n.load,
                bits(&n.tight),
                bits(&n.below),
                n.parent,
                n.depth,
                g.edges,
            );
            t
        }))
    }
}

/// A node with its geometry, as read.
struct RawNode(Node, Geo);

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawNode, D::Error> {
        let t = NodeTuple::deserialize(d)?;
        let node = Node {
            children: t.2,
            start: t.3,
            len: t.4,
            cap: t.5,
            load: t.6,
            tight: from_bits(t.7),
            below: from_bits(t.8),
            parent: t.9,
            depth: t.10,
        };
        let geo = Geo {
            cell: from_bits(t.0),
            loose: from_bits(t.1),
            edges: t.11,
        };
        Ok(RawNode(node, geo))
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (bits(&self.aabb), self.owner, self.generation).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entry, D::Error> {
        let (aabb, owner, generation) = <(Bits, u32, core::num::NonZeroU32)>::deserialize(d)?;
        Ok(Entry {
            aabb: from_bits(aabb),
            owner,
            generation,
        })
    }
}

/// Serializes the whole tree: world, config, nodes, free node blocks,
/// entries, the count of unused entries, and the slab of values and key
/// generations. Scratch memory is left out. A deferred tree is written as
/// the tree its index makes (built now if no question built it yet), so a
/// snapshot always holds a placed tree.
impl<T: Serialize> Serialize for QuadTree<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("QuadTree", 7)?;
        st.serialize_field("world", &self.world)?;
        st.serialize_field("config", &self.config)?;
        if self.deferred {
            let ix = self.ix();
            let at = ix.places(self.slab.slots.len());
            st.serialize_field(
                "nodes",
                &NodesOut {
                    nodes: ix.nodes,
                    geo: ix.geo,
                },
            )?;
            // A slice, not an array: a format without field names (postcard,
            // bincode) writes an array as a tuple, with no length, and the
            // reader expects a sequence.
            let none: &[u32] = &[];
            st.serialize_field("free_blocks", none)?;
            st.serialize_field("entries", ix.entries)?;
            st.serialize_field("garbage", &0usize)?;
            st.serialize_field(
                "slab",
                &SlabAt {
                    slab: &self.slab,
                    at: Some(&at),
                },
            )?;
        } else {
            st.serialize_field(
                "nodes",
                &NodesOut {
                    nodes: &self.nodes,
                    geo: &self.geo,
                },
            )?;
            st.serialize_field("free_blocks", &self.free_blocks)?;
            st.serialize_field("entries", &self.entries)?;
            st.serialize_field("garbage", &self.garbage)?;
            st.serialize_field(
                "slab",
                &SlabAt {
                    slab: &self.slab,
                    at: None,
                },
            )?;
        }
        st.end()
    }
}

/// A slab as a snapshot writes it: `slots` (each `value`, `node`, `pos`),
/// then `generations`, one per slot, then `free_head`, `len` and `seed`.
/// With `at`, each occupied slot's node and position are taken from it
/// (those of a deferred tree's index) instead of from the slot.
struct SlabAt<'a, T> {
    slab: &'a Slab<T>,
    at: Option<&'a [(u32, u32)]>,
}

impl<T: Serialize> Serialize for SlabAt<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// One slot, without its generation.
        struct SlotAt<'a, T> {
            value: Option<&'a T>,
            node: u32,
            pos: u32,
        }
        impl<T: Serialize> Serialize for SlotAt<'_, T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut st = s.serialize_struct("Slot", 3)?;
                st.serialize_field("value", &self.value)?;
                st.serialize_field("node", &self.node)?;
                st.serialize_field("pos", &self.pos)?;
                st.end()
            }
        }
        /// The slots, as a sequence.
        struct SlotsAt<'a, T>(&'a SlabAt<'a, T>);
        impl<T: Serialize> Serialize for SlotsAt<'_, T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let at = self.0.at;
                s.collect_seq(self.0.slab.slots.iter().enumerate().map(|(i, slot)| {
                    let place = self.0.slab.places[i];
                    let (node, pos) = match at {
                        Some(at) if slot.is_full() => at[i],
                        _ => (place.node, place.pos),
                    };
                    SlotAt {
                        value: slot.value(),
                        node,
                        pos,
                    }
                }))
            }
        }
        /// The generations, as a sequence.
        struct Generations<'a, T>(&'a Slab<T>);
        impl<T> Serialize for Generations<'_, T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.slots.iter().map(Slot::generation))
            }
        }
        let slab = self.slab;
        // The refill order of a slab never cleared is empty: formats with
        // field names leave it out, so that such a snapshot is written as
        // before there was one; formats without field names, which cannot
        // tell a field left out, always write it.
        let refill = !s.is_human_readable() || !slab.refill.is_empty() || slab.refill_end != 0;
        let mut st = s.serialize_struct("Slab", if refill { 7 } else { 5 })?;
        st.serialize_field("slots", &SlotsAt(self))?;
        st.serialize_field("generations", &Generations(slab))?;
        st.serialize_field("free_head", &slab.free_head)?;
        st.serialize_field("len", &slab.len)?;
        st.serialize_field("seed", &slab.seed)?;
        if refill {
            st.serialize_field("refill", &slab.refill)?;
            st.serialize_field("refill_end", &slab.refill_end)?;
        } else {
            st.skip_field("refill")?;
            st.skip_field("refill_end")?;
        }
        st.end()
    }
}

/// A slot as read.
#[derive(Deserialize)]
#[serde(rename = "Slot")]
struct RawSlot<T> {
    value: Option<T>,
    node: u32,
    pos: u32,
}

/// A slab as read.
#[derive(Deserialize)]
#[serde(rename = "Slab")]
struct RawSlab<T> {
    slots: Vec<RawSlot<T>>,
    generations: Vec<NonZeroU32>,
    free_head: u32,
    len: usize,
    seed: NonZeroU32,
    /// Absent from snapshots of slabs never cleared, in formats with field
    /// names (and from those of versions before it).
    #[serde(default)]
    refill: Vec<u32>,
    #[serde(default)]
    refill_end: u32,
}

impl<T> RawSlab<T> {
    /// The slab, once each slot has its generation; its other invariants
    /// are [`Slab::check`]'s.
    fn into_slab(self) -> Result<Slab<T>, String> {
        if self.generations.len() != self.slots.len() {
            return Err(format!(
                "{} generations for {} slots",
                self.generations.len(),
                self.slots.len()
            ));
        }
        let (slots, places) = self
            .slots
            .into_iter()
            .zip(self.generations)
            .map(|(s, generation)| {
                let place = Place {
                    node: s.node,
                    pos: s.pos,
                };
                (Slot::new(s.value, generation), place)
            })
            .unzip();
        Ok(Slab {
            slots,
            places,
            free_head: self.free_head,
            len: self.len,
            seed: self.seed,
            refill_at: self.refill.len() as u32,
            in_order: false,
            refill: self.refill,
            refill_end: self.refill_end,
        })
    }
}

/// A snapshot as read, before it is checked.
#[derive(Deserialize)]
#[serde(rename = "QuadTree")]
struct Raw<T> {
    world: Aabb,
    config: Config,
    nodes: Vec<RawNode>,
    free_blocks: Vec<u32>,
    entries: Vec<Entry>,
    garbage: usize,
    slab: RawSlab<T>,
}

/// Restores a tree from its snapshot, refusing (with an error that names
/// the broken invariant) any snapshot that breaks an invariant of the tree
/// (everything [`QuadTree::validate`] checks, the slab's free list
/// included, and the root's geometry): a damaged or forged snapshot never yields a tree
/// that could panic or answer wrongly later.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for QuadTree<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<QuadTree<T>, D::Error> {
        let raw = Raw::<T>::deserialize(d)?;
        QuadTree::from_raw(raw).map_err(D::Error::custom)
    }
}

impl<T> QuadTree<T> {
    fn from_raw(raw: Raw<T>) -> Result<QuadTree<T>, String> {
        let err = |what: &str| format!("invalid quadrat snapshot: {what}");
        raw.world
            .validate()
            .map_err(|e| err(&format!("world: {e}")))?;
        raw.config.validate().map_err(|e| err(&e.to_string()))?;
        let slab = raw.slab.into_slab().map_err(|e| err(&e))?;
        slab.check(raw.config.key_seed).map_err(|e| err(&e))?;
        // The numbers `validate` indexes and adds with, checked first so
        // that it can trust them.
        let (nodes, entries) = (raw.nodes.len() as u64, raw.entries.len() as u64);
        let Some(RawNode(root, root_geo)) = raw.nodes.first() else {
            return Err(err("no root node"));
        };
        let fresh = Geo::root(raw.world);
        if bits(&root_geo.cell) != bits(&fresh.cell)
            || bits(&root_geo.loose) != bits(&fresh.loose)
            || root.depth != 0
            || root_geo.edges != fresh.edges
            || root.parent != NONE
        {
            return Err(err("the root does not match the world"));
        }
        let (raw_nodes, geo): (Vec<Node>, Vec<Geo>) =
            raw.nodes.into_iter().map(|RawNode(n, g)| (n, g)).unzip();
        if nodes >= u64::from(NONE) || entries >= u64::from(NONE) {
            return Err(err("too many nodes or entries"));
        }
        for (i, n) in raw_nodes.iter().enumerate() {
            if n.depth == u8::MAX {
                continue;
            }
            let children_ok =
                n.children == NONE || (n.children % 4 == 1 && u64::from(n.children) + 4 <= nodes);
            if !children_ok
                || n.len > n.cap
                || u64::from(n.start) + u64::from(n.cap) > entries
                || (n.parent != NONE && u64::from(n.parent) >= nodes)
            {
                return Err(err(&format!("node {i} points out of range")));
            }
        }
        if raw
            .free_blocks
            .iter()
            .any(|&f| f % 4 != 1 || u64::from(f) + 4 > nodes)
        {
            return Err(err("a free node block is out of range"));
        }
        if raw.garbage as u64 > entries {
            return Err(err("more unused entries than entries"));
        }
        let mut hot = Vec::new();
        super::runs::hot_of(&raw_nodes, &mut hot);
        let tree = QuadTree {
            world: raw.world,
            config: raw.config,
            max_items: raw.config.max_items as u32,
            nodes: raw_nodes,
            geo,
            hot,
            free_blocks: raw.free_blocks,
            entries: raw.entries,
            garbage: raw.garbage,
            slab,
            movers: Vec::new(),
            splits: Vec::new(),
            dirty: Vec::new(),
            order: Vec::new(),
            placing: Default::default(),
            #[cfg(feature = "parallel")]
            fresh: Vec::new(),
            cats: Vec::new(),
            deferred: false,
            lazy: std::sync::OnceLock::new(),
            spare: super::Spare::default(),
            recycles: false,
        };
        tree.validate().map_err(|e| err(&e))?;
        Ok(tree)
    }
}
