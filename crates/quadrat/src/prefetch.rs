//! A hint to the processor's cache: one of the crate's two kinds of
//! `unsafe` block (the other is in `lanes.rs`).

/// Asks the processor to start fetching the cache line holding `*r`, and
/// returns at once: a hint, with no effect on any value. Does nothing off
/// x86-64, where the hint needs an unstable intrinsic.
///
/// The pair walks use it to fetch, ahead of the closure that reads them,
/// items stored in key order while the walk goes in the tree's order
/// (ARCHITECTURE, *Queries and pairs*, gives the measured gain);
/// `update_all` and `index_slots` to fetch, ahead of their random reads and
/// writes, the entries and slots of the items they go through; area,
/// circle and point queries and ray casts to fetch, as they put a node on
/// their stack, its run's first entry and its children's search copies.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p: *const T = r;
        // SAFETY: `_mm_prefetch` is only a hint to the cache: it reads
        // nothing into the program, writes nothing, and cannot fault,
        // whatever the address (here that of a live reference). SSE, which
        // it needs, is part of every x86-64 processor.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
