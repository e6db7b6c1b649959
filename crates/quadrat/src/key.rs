//! Generational keys and the slab that holds item values.

use core::fmt;
use core::num::NonZeroU32;

/// A stable handle to an item in a [`QuadTree`](crate::QuadTree).
///
/// A key is a slot index plus a generation: 8 bytes, and `Option<Key>` is
/// 8 bytes too. Once its item is removed (or the tree cleared) a key answers
/// `None`/`false` forever, even after its slot is reused, because the slot's
/// generation has moved on.
///
/// **Keys are deterministic.** A tree's keys follow only from its
/// [`Config`](crate::Config) and the calls made on it: the same calls from
/// the same start give the same keys in every run, process and platform,
/// and a tree restored from a snapshot (feature `serde`) hands out the keys
/// the original would have. Two trees with the same
/// [`key_seed`](crate::Config::key_seed) can therefore issue equal keys;
/// give trees different seeds when a key of one must be refused by the
/// other (the first generation of every slot is drawn from the seed, so a
/// key of another seed almost surely fails the generation check).
///
/// ```
/// use quadrat::{Aabb, Config, QuadTree};
/// let world = Aabb::new([0.0, 0.0], [10.0, 10.0]);
/// let mut a = QuadTree::new(world);
/// let mut b = QuadTree::new(world);
/// // Same seed, same calls: the same keys, in any process.
/// assert_eq!(a.insert(Aabb::from_point([1.0, 1.0]), 'a'), b.insert(Aabb::from_point([1.0, 1.0]), 'b'));
/// // Another seed: the other tree's keys are refused.
/// let mut c = QuadTree::with_config(world, Config { key_seed: 7, ..Config::default() });
/// let kc = c.insert(Aabb::from_point([1.0, 1.0]), 'c');
/// assert_eq!(a.get(kc), None);
/// ```
///
/// Keys order by slot index first, which makes orders that break ties by key
/// deterministic for a given sequence of calls.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Key {
    idx: u32,
    generation: NonZeroU32,
}

impl Key {
    #[inline]
    pub(crate) fn new(idx: u32, generation: NonZeroU32) -> Key {
        Key { idx, generation }
    }

    /// The slot index: dense, small, reused after removal. Useful to index a
    /// side table (`Vec`) of per-item data.
    #[inline]
    #[must_use]
    pub fn index(self) -> u32 {
        self.idx
    }

    /// The key as one `u64` (index in the high half), for compact storage or
    /// transport. [`Key::from_bits`] reverses it.
    #[inline]
    #[must_use]
    pub fn to_bits(self) -> u64 {
        (u64::from(self.idx) << 32) | u64::from(self.generation.get())
    }

    /// Rebuilds a key from [`Key::to_bits`]; `None` for a value no key has.
    #[inline]
    #[must_use]
    pub fn from_bits(bits: u64) -> Option<Key> {
        let generation = NonZeroU32::new(bits as u32)?;
        Some(Key {
            idx: (bits >> 32) as u32,
            generation,
        })
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}v{})", self.idx, self.generation)
    }
}

/// The first generation of every slot of a slab made with `key_seed`: a
/// pure function of the seed, so keys are the same in every process.
pub(crate) fn first_generation(key_seed: u32) -> NonZeroU32 {
    // Spread consecutive seeds over the whole range (odd multiplier is a bijection).
    let g = key_seed.wrapping_mul(0x9E37_79B9).wrapping_add(0x7F4A_7C15);
    NonZeroU32::new(g).unwrap_or(NonZeroU32::MIN)
}

const NONE: u32 = u32::MAX;
/// Marks a vacant slot that is never reused.
const RETIRED: u32 = u32::MAX - 1;

/// One slot of the slab: the item's value and its key's generation, or,
/// vacant, the generation of the slot's next key. Reading a value by key
/// ([`QuadTree::get`]) touches this slot alone.
///
/// The generation is never zero, so an occupied slot's generation field
/// tells the two kinds apart (a niche): for a `u32` value a slot takes 8
/// bytes, where a value in an `Option` beside the generation took 12 (16
/// where it took 24 with a `u64`), and the slots of 1M items with `u32`
/// values take 8 MB instead of 12. The layout is the compiler's choice;
/// only the size depends on it.
///
/// [`QuadTree::get`]: crate::QuadTree::get
#[derive(Clone, Debug)]
pub(crate) enum Slot<T> {
    /// An item's value and the generation of its key.
    Full {
        /// The item's value.
        value: T,
        /// The generation of the slot's current key.
        generation: NonZeroU32,
    },
    /// No item: the generation the slot's next key will have.
    Free {
        /// The generation of the slot's next key.
        generation: NonZeroU32,
    },
}

impl<T> Slot<T> {
    /// A slot holding `value` (vacant for `None`) at `generation`.
    pub(crate) fn new(value: Option<T>, generation: NonZeroU32) -> Slot<T> {
        match value {
            Some(value) => Slot::Full { value, generation },
            None => Slot::Free { generation },
        }
    }

    /// The generation of the slot's current key (occupied) or next key
    /// (vacant).
    #[inline]
    pub(crate) fn generation(&self) -> NonZeroU32 {
        match *self {
            Slot::Full { generation, .. } | Slot::Free { generation } => generation,
        }
    }

    /// The value, while occupied.
    #[inline]
    pub(crate) fn value(&self) -> Option<&T> {
        match self {
            Slot::Full { value, .. } => Some(value),
            Slot::Free { .. } => None,
        }
    }

    /// The value, mutably, while occupied.
    #[inline]
    pub(crate) fn value_mut(&mut self) -> Option<&mut T> {
        match self {
            Slot::Full { value, .. } => Some(value),
            Slot::Free { .. } => None,
        }
    }

    /// `true` while the slot holds a value.
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        matches!(self, Slot::Full { .. })
    }

    /// The value of the slot's item if its key has `generation`.
    #[inline]
    pub(crate) fn value_at(&self, generation: NonZeroU32) -> Option<&T> {
        match self {
            Slot::Full {
                value,
                generation: g,
            } if *g == generation => Some(value),
            _ => None,
        }
    }

    /// The value, mutably, of the slot's item if its key has `generation`.
    #[inline]
    pub(crate) fn value_at_mut(&mut self, generation: NonZeroU32) -> Option<&mut T> {
        match self {
            Slot::Full {
                value,
                generation: g,
            } if *g == generation => Some(value),
            _ => None,
        }
    }

    /// Takes the value out, leaving the slot vacant at the same
    /// generation.
    #[inline]
    pub(crate) fn take(&mut self) -> Option<T> {
        let generation = self.generation();
        match core::mem::replace(self, Slot::Free { generation }) {
            Slot::Full { value, .. } => Some(value),
            Slot::Free { .. } => None,
        }
    }

    /// Puts `value` into the slot at its generation.
    #[inline]
    pub(crate) fn fill(&mut self, value: T) {
        let generation = self.generation();
        *self = Slot::Full { value, generation };
    }

    /// Sets the generation, keeping the value or the vacancy.
    #[inline]
    fn set_generation(&mut self, g: NonZeroU32) {
        match self {
            Slot::Full { generation, .. } | Slot::Free { generation } => *generation = g,
        }
    }
}

/// Where the item of a slot lives, in [`Slab::places`] at the slot's
/// index: kept apart from the values, so that a build, which points every
/// item at its new place in a random order of slots, writes 8 bytes an
/// item into an array of 8, where it wrote into slots of 20 (for a `u32`
/// value); the doc comment of `QuadTree::index_slots` gives the measured
/// gain. A value's reads (`get`) touch the slot alone, as before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Place {
    /// Occupied: the node holding the item. In a deferred tree, whose
    /// items are in no node yet, it names no node: 0, the link the clear
    /// left (see [`Slab::insert_at`]), or a rank for the next clear
    /// (`QuadTree::rank_items`). Vacant: the next free slot (or [`NONE`],
    /// or `RETIRED`).
    pub(crate) node: u32,
    /// Occupied: the item's position in the tree's entry array. Vacant:
    /// for a slot of the free list the last clear made and not taken
    /// since, its place in that list; otherwise what it was.
    pub(crate) pos: u32,
}

/// A slab of item values addressed by generational [`Key`]s.
#[derive(Clone, Debug)]
pub(crate) struct Slab<T> {
    pub(crate) slots: Vec<Slot<T>>,
    /// Where each slot's item lives (see [`Place`]), as long as `slots`
    /// (but for the slots a bulk build into an empty tree is filling: see
    /// [`push_unplaced`](Slab::push_unplaced)).
    pub(crate) places: Vec<Place>,
    pub(crate) free_head: u32,
    pub(crate) len: usize,
    pub(crate) seed: NonZeroU32,
    /// The order of the free list the last [`clear`](Slab::clear) made
    /// (every slot then usable): the slots the inserts since then took, in
    /// the order they took them, as long as nothing was removed between.
    /// Empty before the first clear.
    pub(crate) refill: Vec<u32>,
    /// How many slots there were at the last clear: those from here on
    /// were added after it, taken by the inserts that followed `refill`,
    /// in order.
    pub(crate) refill_end: u32,
    /// Where the free list is in `refill`: while its head is
    /// `refill[refill_at]`, the free list is the rest of `refill` (see
    /// [`insert`](Slab::insert)). Not part of a snapshot: a restored slab
    /// starts past the end, and reads every next free slot from its place.
    pub(crate) refill_at: u32,
    /// `true` while every insert since the last clear (or since the slab
    /// was made) took the slot `refill` names next, or a slot added at the
    /// end: then the items, taken in the order they were inserted, are the
    /// occupied slots of `refill` followed by those added since, in order,
    /// and a deferred tree may hand its ranks over in the order of its
    /// inserts ([`Ranks::Wanted`]). A removal, an insert taken back, or a
    /// snapshot read makes it `false` until the next clear.
    pub(crate) in_order: bool,
}

impl<T> Slab<T> {
    pub(crate) fn new(key_seed: u32) -> Slab<T> {
        Slab {
            slots: Vec::new(),
            places: Vec::new(),
            free_head: NONE,
            len: 0,
            seed: first_generation(key_seed),
            refill: Vec::new(),
            refill_end: 0,
            refill_at: 0,
            in_order: true,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// [`reserve`](Slab::reserve) where the room can be had: for a batch
    /// whose size is the caller's iterator's `size_hint`, which may claim
    /// more than any allocation can hold. Then nothing is reserved, and
    /// the arrays grow as the items come.
    pub(crate) fn try_reserve(&mut self, additional: usize) {
        let needed = self.len.saturating_add(additional);
        let more = needed.saturating_sub(self.slots.len());
        if self.slots.try_reserve(more).is_ok() {
            let _ = self.places.try_reserve(more);
        }
    }

    /// Makes room for `additional` more values without reallocating.
    pub(crate) fn reserve(&mut self, additional: usize) {
        // Inserts take free slots first: room is needed only beyond them.
        let needed = self.len.saturating_add(additional);
        let more = needed.saturating_sub(self.slots.len());
        self.slots.reserve(more);
        self.places.reserve(more);
    }

    /// The slot index of a live key.
    #[inline]
    pub(crate) fn index_of(&self, key: Key) -> Option<usize> {
        let idx = key.idx as usize;
        let slot = self.slots.get(idx)?;
        slot.value_at(key.generation).map(|_| idx)
    }

    /// The value of a live key: one slot read, whose generation field
    /// tells both whether it is occupied and whether the key is current.
    #[inline]
    pub(crate) fn get(&self, key: Key) -> Option<&T> {
        self.slots.get(key.idx as usize)?.value_at(key.generation)
    }

    /// The value of a live key, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        self.slots
            .get_mut(key.idx as usize)?
            .value_at_mut(key.generation)
    }

    /// Asks the processor to start fetching slot `idx` into cache (see
    /// [`prefetch`](crate::prefetch::prefetch)); nothing when there is no
    /// such slot. Slots are in key order, not the tree's, so what walks the
    /// tree and reads slots misses the cache at each one: the pair walks
    /// that hand pairs to the caller's closure call this for each node's
    /// items before pairing them, so that the closure's `get`s find their
    /// slots in cache.
    #[inline(always)]
    pub(crate) fn prefetch(&self, idx: u32) {
        if let Some(slot) = self.slots.get(idx as usize) {
            crate::prefetch::prefetch(slot);
        }
    }

    /// Like [`prefetch`](Slab::prefetch), for the place of slot `idx`:
    /// `index_slots` and `place_in_bulk` call it for the places they are
    /// about to write.
    #[inline(always)]
    pub(crate) fn prefetch_place(&self, idx: u32) {
        if let Some(place) = self.places.get(idx as usize) {
            crate::prefetch::prefetch(place);
        }
    }

    /// The key of an occupied slot.
    #[inline]
    pub(crate) fn key_at(&self, idx: usize) -> Key {
        Key::new(idx as u32, self.slots[idx].generation())
    }

    /// Stores `value` for the `pos`-th insert into a deferred tree (whose
    /// items' places must say `pos`), returning its new key and slot index.
    ///
    /// While the inserts since the last clear took the refill's slots in
    /// order, the `pos`-th of them takes the refill's `pos`-th slot, whose
    /// place the clear already wrote with `pos` (see
    /// [`clear`](Slab::clear)). Then the insert writes the slot alone: one
    /// random write less. At 1M boxes refilled in the last tree's order,
    /// the inserts took 8.2–8.7 ms where they took 15.2–16.3.
    #[inline]
    pub(crate) fn insert_at(&mut self, value: T, pos: u32) -> (Key, usize) {
        let head = self.free_head;
        if head == NONE || self.refill_at != pos || self.refill.get(pos as usize) != Some(&head) {
            return self.insert(value, 0, pos);
        }
        let idx = self.fill_head(value, false);
        debug_assert_eq!(self.places[idx].pos, pos, "the clear placed the refill");
        (self.key_at(idx), idx)
    }

    /// Stores `value` in a new slot at the end, with no place yet, and
    /// returns the slot's index: for a bulk build into a slab without a
    /// free slot, which holds the items' places only once their entries
    /// are gathered ([`place_new`](Slab::place_new) gives them one), so
    /// that the gather's peak does not hold them too. Until then the slab
    /// has fewer places than slots.
    pub(crate) fn push_unplaced(&mut self, value: T) -> usize {
        debug_assert_eq!(self.free_head, NONE, "a slab with free slots");
        assert!(
            self.slots.len() < RETIRED as usize,
            "quadrat: more than 2^32 - 1 items"
        );
        self.slots.push(Slot::Full {
            value,
            generation: self.seed,
        });
        self.len += 1;
        self.slots.len() - 1
    }

    /// Gives every slot that [`push_unplaced`](Slab::push_unplaced) filled
    /// a place, (0, 0): for the build to overwrite, or for
    /// [`take_back`](Slab::take_back) to pop with its slot.
    pub(crate) fn place_new(&mut self) {
        self.places.resize(self.slots.len(), Place::default());
    }

    /// Room for `additional` new slots where it can be had (see
    /// [`try_reserve`](Slab::try_reserve)), and for no place: for a batch
    /// that [`push_unplaced`](Slab::push_unplaced) stores, each item in a
    /// new slot (retired slots taking none).
    pub(crate) fn try_reserve_slots(&mut self, additional: usize) {
        let _ = self.slots.try_reserve(additional);
    }

    /// Stores `value`, returning its new key and slot index.
    pub(crate) fn insert(&mut self, value: T, node: u32, pos: u32) -> (Key, usize) {
        let idx = if self.free_head != NONE {
            let idx = self.fill_head(value, true);
            self.places[idx] = Place { node, pos };
            idx
        } else {
            let idx = self.push_unplaced(value);
            self.places.push(Place { node, pos });
            idx
        };
        (self.key_at(idx), idx)
    }

    /// Stores `value` in the free list's head, which must exist, and
    /// returns its slot index. `place`: the caller writes the slot's place
    /// (see [`next_free`](Slab::next_free)).
    #[inline]
    fn fill_head(&mut self, value: T, place: bool) -> usize {
        let idx = self.free_head as usize;
        self.free_head = self.next_free(idx, place);
        self.slots[idx].fill(value);
        self.len += 1;
        idx
    }

    /// The free slot after `idx`, the free list's head. While the free list
    /// is the order [`clear`](Slab::clear) made, it is `refill` from
    /// `refill_at` on, and its next slot is read there, in order: after a
    /// clear that ordered the slots as the tree, the inserts of a refill
    /// take them in no order of their own, and each would wait for the
    /// random read of its slot's place to know where the next insert goes
    /// (the clear and the inserts of a refill of 1M boxes took 83–106 ms,
    /// against 25 reading `refill`). Removals put
    /// their slot before the rest of the list, and an insert that takes it
    /// reads its place as before. The slots a few inserts ahead are
    /// fetched into cache, since each insert writes its slot, and their
    /// places when `place` (an insert that writes the place).
    #[inline]
    fn next_free(&mut self, idx: usize, place: bool) -> u32 {
        let at = self.refill_at as usize;
        match self.refill.get(at) {
            Some(&head) if head as usize == idx => {
                self.refill_at += 1;
                if let Some(&ahead) = self.refill.get(at + AHEAD) {
                    self.prefetch(ahead);
                    if place {
                        self.prefetch_place(ahead);
                    }
                }
                let next = self.refill.get(at + 1).copied().unwrap_or(NONE);
                debug_assert_eq!(next, self.places[idx].node, "the free list left refill");
                next
            }
            _ => self.places[idx].node,
        }
    }

    /// Empties slot `idx` (which must be occupied), returning its value.
    pub(crate) fn remove_at(&mut self, idx: usize) -> T {
        let value = self.slots[idx].take().expect("occupied slot");
        self.len -= 1;
        self.in_order = false;
        if self.bump(idx) {
            self.places[idx].node = self.free_head;
            self.free_head = idx as u32;
        }
        value
    }

    /// Undoes the [`insert`](Slab::insert) that filled slot `idx`, whose
    /// key was never handed out, returning its value: the slot keeps its
    /// generation and goes back to the head of the free list, or off the
    /// end of the slab when that insert added it (slots from `first_new`
    /// on). Undoing a run of inserts in reverse order leaves the slab as it
    /// was before them, so the keys handed out afterwards are the same.
    pub(crate) fn take_back(&mut self, idx: usize, first_new: usize) -> T {
        let value = self.slots[idx].take().expect("occupied slot");
        self.len -= 1;
        self.in_order = false;
        if idx >= first_new {
            assert_eq!(
                idx + 1,
                self.slots.len(),
                "quadrat: slots taken back out of order"
            );
            self.slots.pop();
            self.places.pop();
        } else {
            self.places[idx].node = self.free_head;
            self.free_head = idx as u32;
        }
        value
    }

    /// Moves a vacated slot to its next generation. Returns `false` and
    /// retires the slot for good when the generation would come round to the
    /// first one again, so that no stale key can ever match.
    fn bump(&mut self, idx: usize) -> bool {
        match NonZeroU32::new(self.slots[idx].generation().get().wrapping_add(1)) {
            Some(g) if g != self.seed => {
                self.slots[idx].set_generation(g);
                true
            }
            _ => {
                self.places[idx].node = RETIRED;
                false
            }
        }
    }

    /// Checks what a snapshot says of the slab before anything trusts it
    /// (that it has one generation per slot is checked as it is read): the
    /// first generation the seed gives, and the count and lists
    /// [`check_lists`](Slab::check_lists) checks. The tree's `validate`
    /// checks the occupied slots against the entries.
    #[cfg(feature = "serde")]
    pub(crate) fn check(&self, key_seed: u32) -> Result<(), String> {
        if self.slots.len() >= RETIRED as usize {
            return Err("more than 2^32 - 2 slots".into());
        }
        if self.places.len() != self.slots.len() {
            return Err(format!(
                "{} places for {} slots",
                self.places.len(),
                self.slots.len()
            ));
        }
        if self.seed != first_generation(key_seed) {
            return Err("the first generation does not follow from config.key_seed".into());
        }
        self.check_lists()
    }

    /// Checks the slab's count and lists (for snapshots and the tree's
    /// `validate`; `places` must be as long as `slots`): `len` occupied
    /// slots; a free list that ends, stays in range and lists every vacant
    /// slot that is not retired exactly once, so that no slot is lost to
    /// later inserts; and a refill order that names slots that existed at
    /// the last clear, each once.
    pub(crate) fn check_lists(&self) -> Result<(), String> {
        let occupied = self.slots.iter().filter(|s| s.is_full()).count();
        if occupied != self.len {
            return Err(format!("{occupied} occupied slots, len {}", self.len));
        }
        let mut listed = vec![false; self.slots.len()];
        let mut at = self.free_head;
        while at != NONE {
            let Some(slot) = self.slots.get(at as usize) else {
                return Err(format!("the free list points at slot {at}, out of range"));
            };
            if slot.is_full() || listed[at as usize] {
                return Err(format!(
                    "the free list reaches slot {at} twice or while occupied"
                ));
            }
            listed[at as usize] = true;
            at = self.places[at as usize].node;
        }
        for (idx, slot) in self.slots.iter().enumerate() {
            if !slot.is_full() && !listed[idx] && self.places[idx].node != RETIRED {
                return Err(format!("vacant slot {idx} is neither free nor retired"));
            }
        }
        // The refill order names slots that existed at the last clear,
        // each once.
        if self.refill_end as usize > self.slots.len() {
            return Err(format!(
                "refill_end {} past the {} slots",
                self.refill_end,
                self.slots.len()
            ));
        }
        let mut seen = vec![false; self.refill_end as usize];
        for &idx in &self.refill {
            match seen.get_mut(idx as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(format!(
                        "the refill order names slot {idx} twice or past refill_end"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Removes every value, invalidating all keys, keeping the capacity.
    ///
    /// The free list it makes hands out the slots so that a refill in the
    /// order of the last one puts the values in the tree's order: given
    /// the place in the tree's order of each item (see [`Ranks`]), the
    /// item the k-th insert since the last clear stored (`refill`, then
    /// the slots added since) gives the k-th slot of the new list: the
    /// usable slot whose rank among them is the item's place. Refilled in the same
    /// order, every object gets the slot of its place in the tree it had,
    /// and a pair walk that reads the values of the pairs it finds, which
    /// goes in the tree's order, reads the slots nearly in order, where in
    /// key order each was a cache miss. The other usable slots follow in
    /// ascending order; so do all of them when the tree was not ranked, or
    /// when the ranks do not cover every item (a slot retired now takes no
    /// place in the list either way). The k-th slot of the list gets the
    /// place `(link, k)`: its link, and the position the k-th insert of a
    /// deferred refill gives its item ([`insert_at`](Slab::insert_at)).
    pub(crate) fn clear(&mut self, ranks: Ranks) {
        let live = self.len;
        let mut order = core::mem::take(&mut self.refill);
        let complete = match ranks {
            Ranks::Unknown => false,
            Ranks::InPlaces => self.wanted_ranks(&mut order, live) == live,
            Ranks::Wanted => order.len() == live,
        };
        // The bookkeeping first, then the values are dropped: a destructor
        // that panics finds the slab already empty and consistent (the
        // values after it are leaked, never reachable again).
        let mut retired = 0;
        for idx in 0..self.slots.len() {
            let usable = if self.slots[idx].is_full() {
                self.bump(idx)
            } else {
                self.places[idx].node != RETIRED
            };
            retired += usize::from(!usable);
        }
        let n = self.slots.len();
        let usable = n - retired;
        if complete && retired == 0 {
            // The usable slots are `0..n`: a rank is its slot.
            order.extend(live as u32..n as u32);
        } else if complete && usable >= live {
            let slots: Vec<u32> = (0..n as u32)
                .filter(|&i| self.places[i as usize].node != RETIRED)
                .collect();
            for r in &mut order {
                *r = slots[*r as usize];
            }
            order.extend_from_slice(&slots[live..]);
        } else {
            order.clear();
            order.extend((0..n as u32).filter(|&i| self.places[i as usize].node != RETIRED));
        }
        debug_assert_eq!(order.len(), usable);
        let mut next = NONE;
        for (i, &idx) in order.iter().enumerate().rev() {
            if let Some(&ahead) = i.checked_sub(AHEAD).and_then(|a| order.get(a)) {
                self.prefetch_place(ahead);
            }
            // The link, and the place the `i`-th insert of a refill in
            // this order will have (`insert_at`): one write.
            self.places[idx as usize] = Place {
                node: next,
                pos: i as u32,
            };
            next = idx;
        }
        self.free_head = next;
        self.refill = order;
        self.refill_end = n as u32;
        self.refill_at = 0;
        self.in_order = true;
        self.len = 0;
        let mut leak_rest = LeakOnUnwind(&mut self.slots, 0);
        while leak_rest.1 < leak_rest.0.len() {
            let i = leak_rest.1;
            leak_rest.1 += 1;
            drop(leak_rest.0[i].take());
        }
    }

    /// The rank an occupied slot `idx` holds in its place, once: it is
    /// marked taken.
    #[inline]
    fn take_rank(&mut self, idx: u32) -> Option<u32> {
        let i = idx as usize;
        if !self.slots.get(i).is_some_and(Slot::is_full) {
            return None;
        }
        let rank = core::mem::replace(&mut self.places[i].node, NONE);
        (rank != NONE).then_some(rank)
    }

    /// For [`clear`](Slab::clear) of a ranked slab: rewrites `order` (the
    /// last `refill`) as the ranks of the occupied slots among it and the
    /// slots added since, in that order, and returns how many there are.
    /// Each slot counts once (its rank is marked taken), and a rank past
    /// `live` makes the count `0`: only a rank of every item, each once,
    /// makes a new order.
    fn wanted_ranks(&mut self, order: &mut Vec<u32>, live: usize) -> usize {
        let n = self.slots.len();
        let mut kept = 0;
        for k in 0..order.len() {
            if let Some(&ahead) = order.get(k + AHEAD) {
                self.prefetch(ahead);
                self.prefetch_place(ahead);
            }
            if let Some(rank) = self.take_rank(order[k]) {
                order[kept] = rank;
                kept += 1;
            }
        }
        order.truncate(kept);
        for idx in (self.refill_end as usize).min(n)..n {
            if let Some(rank) = self.take_rank(idx as u32) {
                order.push(rank);
            }
        }
        if order.iter().any(|&r| r as usize >= live) {
            return 0;
        }
        order.len()
    }
}

/// What [`Slab::clear`] is told of the places of the items in the tree's
/// order (`0..len`), their ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ranks {
    /// Not known: the refill takes the slots in ascending order.
    Unknown,
    /// In the `node` of each occupied slot's place.
    InPlaces,
    /// In `refill`, in the order the inserts since the last clear stored
    /// the items, which `in_order` says is the order of `refill` and the
    /// slots added since: a permutation of `0..len`.
    Wanted,
}

/// How many slots ahead in `refill` an insert or a clear fetches the slot
/// and place it will write.
const AHEAD: usize = 16;

/// Takes the values of `slots[from..]` out without dropping them when
/// dropped: what a panicking destructor leaves for [`Slab::clear`].
struct LeakOnUnwind<'a, T>(&'a mut [Slot<T>], usize);

impl<T> Drop for LeakOnUnwind<'_, T> {
    fn drop(&mut self) {
        for slot in &mut self.0[self.1..] {
            core::mem::forget(slot.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Ranks, Slab, Slot};
    use core::num::NonZeroU32;

    /// A slab of `n` values `0..n`, their slots handed out in order.
    fn filled(n: u32) -> Slab<u32> {
        let mut slab = Slab::new(3);
        for v in 0..n {
            slab.insert(v, 0, v);
        }
        slab
    }

    /// A bulk insert into a tree whose every slot is retired gives its
    /// items new slots after those, with no place until their entries are
    /// gathered; a caller's iterator that panics midway leaves the tree as
    /// it was, slots and places alike, and the next batch goes in whole.
    #[test]
    fn a_bulk_insert_after_retired_slots_takes_back_its_slots_whole() {
        use crate::{Aabb, QuadTree};
        use std::panic::{AssertUnwindSafe, catch_unwind};
        let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
        for i in 0..3 {
            tree.insert(Aabb::from_point([i as f32, 1.0]), 100);
        }
        tree.validate().unwrap();
        for idx in 0..3 {
            // The last generation: the removal retires the slot.
            tree.slab.slots[idx].set_generation(NonZeroU32::MAX);
            let key = tree.slab.key_at(idx);
            assert_eq!(tree.remove(key), Some(100));
        }
        assert_eq!(tree.slab.free_head, super::NONE, "every slot retired");
        let boxes: Vec<Aabb> = (0..100)
            .map(|i| Aabb::from_point([(i % 10) as f32, (i / 10) as f32]))
            .collect();
        let failing = boxes.iter().enumerate().map(|(i, &b)| {
            assert!(i != 70, "the caller's iterator fails");
            (b, i)
        });
        assert!(catch_unwind(AssertUnwindSafe(|| tree.insert_many(failing))).is_err());
        tree.validate().unwrap();
        assert!(tree.is_empty());
        assert_eq!((tree.slab.slots.len(), tree.slab.places.len()), (3, 3));
        let keys = tree.insert_many(boxes.iter().copied().zip(0..));
        tree.validate().unwrap();
        for (i, k) in keys.into_iter().enumerate() {
            assert_eq!((k.index(), tree.get(k)), (3 + i as u32, Some(&i)));
        }
        assert_eq!(tree.slab.places.len(), 103);
        // The build's scratch is freed: a tree filled once keeps none.
        assert_eq!((tree.cats.capacity(), tree.order.capacity()), (0, 0));
    }

    /// The slot indices the next `n` inserts get.
    fn refill(slab: &mut Slab<u32>, n: u32) -> Vec<u32> {
        (0..n).map(|v| slab.insert(v, 0, v).0.index()).collect()
    }

    /// A deferred insert that takes the refill's slot at its own place
    /// among the inserts finds the place the clear wrote; one that does not
    /// (after a removal, after slots taken back, or past the refill) writes
    /// its own. Either way, every item's place says where its insert put it.
    #[test]
    fn deferred_inserts_find_or_write_their_places() {
        // Ranked, so that the refill's k-th slot is not slot k.
        let ranked = || {
            let mut slab = filled(6);
            for (p, r) in slab.places.iter_mut().zip([3, 0, 5, 1, 4, 2]) {
                p.node = r;
            }
            slab.clear(Ranks::InPlaces);
            assert_eq!(slab.refill, [3, 0, 5, 1, 4, 2]);
            slab
        };
        let check = |slab: &Slab<u32>, stored: &[(usize, u32)]| {
            for &(idx, p) in stored {
                assert_eq!(slab.places[idx].pos, p, "slot {idx}");
                assert_eq!(slab.get(slab.key_at(idx)), Some(&p));
            }
        };
        let mut slab = ranked();
        let mut stored: Vec<(usize, u32)> = (0..4).map(|p| (slab.insert_at(p, p).1, p)).collect();
        assert_eq!(stored.iter().map(|s| s.0).collect::<Vec<_>>(), [3, 0, 5, 1]);
        check(&slab, &stored);
        // A removal puts its slot first, out of the refill's order.
        let (gone, _) = stored.remove(1);
        assert_eq!(slab.remove_at(gone), 1);
        stored.extend((4..9).map(|p| (slab.insert_at(p, p).1, p)));
        assert_eq!(stored[3].0, gone, "the removed slot is taken first");
        assert_eq!(slab.slots.len(), 8, "two slots added past the refill");
        check(&slab, &stored);
        // Slots taken by a batch and taken back go back first, each with
        // the place the batch wrote, in the refill's order: the inserts
        // after them are not the refill's.
        let mut slab = ranked();
        let taken: Vec<usize> = (0..3).map(|v| slab.insert(v, 0, 0).1).collect();
        for &idx in taken.iter().rev() {
            slab.take_back(idx, 6);
        }
        let stored: Vec<(usize, u32)> = (0..6).map(|p| (slab.insert_at(p, p).1, p)).collect();
        assert_eq!(
            stored.iter().map(|s| s.0).collect::<Vec<_>>(),
            [3, 0, 5, 1, 4, 2]
        );
        check(&slab, &stored);
    }

    /// With every item ranked, the n-th insert after a clear gets the
    /// usable slot whose rank among them is the place of the item the n-th
    /// insert before it stored, and the slots past the items follow in
    /// ascending order; the order is kept for the clear after, where the
    /// inserts since then are read through it.
    #[test]
    fn a_ranked_clear_hands_out_the_slots_in_the_trees_order() {
        let mut slab = filled(6);
        let ranks = [3, 0, 5, 1, 4, 2];
        for (p, &r) in slab.places.iter_mut().zip(&ranks) {
            p.node = r;
        }
        slab.clear(Ranks::InPlaces);
        assert_eq!(slab.refill, vec![3, 0, 5, 1, 4, 2]);
        assert_eq!(slab.refill_end, 6);
        assert_eq!(refill(&mut slab, 4), vec![3, 0, 5, 1]);
        // The 5th and 6th of these inserts take slots added past the end.
        assert_eq!(refill(&mut slab, 4), vec![4, 2, 6, 7]);
        // Inserts 0..8 took 3, 0, 5, 1, 4, 2, 6, 7; place the items of
        // slots 0..8 at these ranks.
        let ranks = [7, 6, 5, 4, 3, 2, 1, 0];
        for (p, &r) in slab.places.iter_mut().zip(&ranks) {
            p.node = r;
        }
        slab.clear(Ranks::InPlaces);
        // Insert k took slot s, whose item has rank ranks[s].
        let expect: Vec<u32> = [3, 0, 5, 1, 4, 2, 6, 7].iter().map(|&s| ranks[s]).collect();
        assert_eq!(refill(&mut slab, 8), expect);
        // Unranked: ascending, as the slots are.
        slab.clear(Ranks::Unknown);
        assert_eq!(refill(&mut slab, 8), (0..8).collect::<Vec<_>>());
        // The ranks given in the order of the inserts.
        slab.refill = vec![5, 7, 6, 0, 1, 2, 3, 4];
        slab.clear(Ranks::Wanted);
        assert_eq!(refill(&mut slab, 8), vec![5, 7, 6, 0, 1, 2, 3, 4]);
        // Ranks of some items only: ascending.
        slab.refill = vec![1, 0];
        slab.clear(Ranks::Wanted);
        assert_eq!(refill(&mut slab, 8), (0..8).collect::<Vec<_>>());
    }

    /// Ranks that do not cover every item each once (a rank past the
    /// items, or an item whose slot the order never names) give the
    /// ascending order; a slot retired by the clear takes no place, and
    /// the ranks then index the slots still usable.
    #[test]
    fn a_clear_without_a_rank_of_every_item_hands_out_slots_in_ascending_order() {
        let mut slab = filled(5);
        for (p, r) in slab.places.iter_mut().zip([0, 1, 9, 2, 3]) {
            p.node = r;
        }
        slab.clear(Ranks::InPlaces);
        assert_eq!(refill(&mut slab, 5), vec![0, 1, 2, 3, 4]);
        // An order that names slot 4 twice and slot 3 never.
        slab.refill = vec![4, 1, 2, 0, 4];
        for (p, r) in slab.places.iter_mut().zip([0, 1, 2, 3, 4]) {
            p.node = r;
        }
        slab.clear(Ranks::InPlaces);
        assert_eq!(refill(&mut slab, 5), vec![0, 1, 2, 3, 4]);
        // Slot 2's generation is the last before the wrap: the clear
        // retires it, and the ranks 0..5 go to the usable slots 0, 1, 3,
        // 4 and 5 (vacant).
        let mut slab = filled(6);
        slab.remove_at(5);
        slab.slots[2].set_generation(NonZeroU32::MAX);
        for (p, r) in slab.places.iter_mut().zip([4, 3, 2, 1, 0]) {
            p.node = r;
        }
        slab.clear(Ranks::InPlaces);
        assert_eq!(slab.refill, vec![5, 4, 3, 1, 0]);
        assert_eq!(refill(&mut slab, 6), vec![5, 4, 3, 1, 0, 6]);
        #[cfg(feature = "serde")]
        assert_eq!(slab.check(3), Ok(()));
        // With no slot to spare, a retired one leaves a rank without a
        // slot: ascending.
        let mut slab = filled(3);
        slab.slots[0].set_generation(NonZeroU32::MAX);
        for (p, r) in slab.places.iter_mut().zip([2, 1, 0]) {
            p.node = r;
        }
        slab.clear(Ranks::InPlaces);
        assert_eq!(refill(&mut slab, 2), vec![1, 2]);
        #[cfg(feature = "serde")]
        assert_eq!(slab.check(3), Ok(()));
    }

    /// The generation's niche tells occupied slots from vacant ones, so a
    /// slot with a value of at least 4 bytes takes no more room than the
    /// value and a generation, aligned (a smaller value leaves no room for
    /// a vacant slot's generation): what the slab's memory figures rest on.
    #[test]
    fn a_slot_is_a_value_and_a_generation() {
        assert_eq!(size_of::<Slot<u32>>(), 8);
        // 16 bytes where `u64` is aligned to 8, 12 where to 4 (i686).
        assert_eq!(
            size_of::<Slot<u64>>(),
            12usize.next_multiple_of(align_of::<u64>())
        );
        assert_eq!(size_of::<Slot<[f32; 2]>>(), 12);
        assert_eq!(size_of::<Slot<()>>(), 8);
    }
}
