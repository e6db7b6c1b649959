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
    /// Occupied: the node holding the item. Vacant: the next free slot
    /// (or [`NONE`], or `RETIRED`).
    pub(crate) node: u32,
    /// Occupied: the item's position in the tree's entry array.
    pub(crate) pos: u32,
}

/// A slab of item values addressed by generational [`Key`]s.
#[derive(Clone, Debug)]
pub(crate) struct Slab<T> {
    pub(crate) slots: Vec<Slot<T>>,
    /// Where each slot's item lives (see [`Place`]), as long as `slots`.
    pub(crate) places: Vec<Place>,
    pub(crate) free_head: u32,
    pub(crate) len: usize,
    pub(crate) seed: NonZeroU32,
}

impl<T> Slab<T> {
    pub(crate) fn new(key_seed: u32) -> Slab<T> {
        Slab {
            slots: Vec::new(),
            places: Vec::new(),
            free_head: NONE,
            len: 0,
            seed: first_generation(key_seed),
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
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

    /// Stores `value`, returning its new key and slot index.
    pub(crate) fn insert(&mut self, value: T, node: u32, pos: u32) -> (Key, usize) {
        let idx = if self.free_head != NONE {
            let idx = self.free_head as usize;
            self.free_head = self.places[idx].node;
            self.slots[idx].fill(value);
            self.places[idx] = Place { node, pos };
            idx
        } else {
            assert!(
                self.slots.len() < RETIRED as usize,
                "quadrat: more than 2^32 - 1 items"
            );
            self.slots.push(Slot::Full {
                value,
                generation: self.seed,
            });
            self.places.push(Place { node, pos });
            self.slots.len() - 1
        };
        self.len += 1;
        (self.key_at(idx), idx)
    }

    /// Empties slot `idx` (which must be occupied), returning its value.
    pub(crate) fn remove_at(&mut self, idx: usize) -> T {
        let value = self.slots[idx].take().expect("occupied slot");
        self.len -= 1;
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
    /// first generation the seed gives, and
    /// a free list that ends, stays in range, and lists every vacant slot
    /// that is not retired exactly once. The tree's `validate` checks the
    /// occupied slots against the entries.
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
        Ok(())
    }

    /// Removes every value, invalidating all keys, keeping the capacity. The
    /// free list is rebuilt in ascending order so that refills reuse the
    /// lowest slots first.
    pub(crate) fn clear(&mut self) {
        // The bookkeeping first, then the values are dropped: a destructor
        // that panics finds the slab already empty and consistent (the
        // values after it are leaked, never reachable again).
        let mut next = NONE;
        for idx in (0..self.slots.len()).rev() {
            if self.slots[idx].is_full() {
                if !self.bump(idx) {
                    continue;
                }
            } else if self.places[idx].node == RETIRED {
                continue;
            }
            self.places[idx].node = next;
            next = idx as u32;
        }
        self.free_head = next;
        self.len = 0;
        let mut leak_rest = LeakOnUnwind(&mut self.slots, 0);
        while leak_rest.1 < leak_rest.0.len() {
            let i = leak_rest.1;
            leak_rest.1 += 1;
            drop(leak_rest.0[i].take());
        }
    }
}

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
    use super::Slot;

    /// The generation's niche tells occupied slots from vacant ones, so a
    /// slot with a value of at least 4 bytes takes no more room than the
    /// value and a generation, aligned (a smaller value leaves no room for
    /// a vacant slot's generation): what the slab's memory figures rest on.
    #[test]
    fn a_slot_is_a_value_and_a_generation() {
        assert_eq!(size_of::<Slot<u32>>(), 8);
        assert_eq!(size_of::<Slot<u64>>(), 16);
        assert_eq!(size_of::<Slot<[f32; 2]>>(), 12);
        assert_eq!(size_of::<Slot<()>>(), 8);
    }
}
