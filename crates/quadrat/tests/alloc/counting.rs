//! A global allocator that counts allocations and the bytes they hold, for
//! the tests that show a steady state allocates nothing and that a tree
//! holds little room it does not use. The counts are global: nothing else
//! may run meanwhile (see `main.rs`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Forwards to the system allocator, counting allocations and reallocations,
/// and the bytes allocated and not yet freed.
pub(crate) struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static PEAK_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Adds `bytes` to the live bytes, and to their peak.
fn grow(bytes: usize) {
    let live = LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        grow(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p == ptr {
            // Resized in place: only the difference was ever live.
            if new_size >= layout.size() {
                grow(new_size - layout.size());
            } else {
                LIVE_BYTES.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        } else if !p.is_null() {
            // Moved: both blocks were live while the bytes were copied.
            grow(new_size);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// How many allocations `f` made, on any thread.
pub(crate) fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

/// `f`'s result and the bytes it still holds once it has returned (what it
/// allocated and did not free; negative when it freed more).
pub(crate) fn held_by<R>(f: impl FnOnce() -> R) -> (R, isize) {
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    let r = f();
    let after = LIVE_BYTES.load(Ordering::Relaxed);
    (r, after as isize - before as isize)
}

/// `f`'s result, the bytes it still holds once it has returned (as
/// [`held_by`]), and the most it held at any time while it ran.
pub(crate) fn held_and_peak<R>(f: impl FnOnce() -> R) -> (R, isize, usize) {
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    PEAK_BYTES.store(before, Ordering::Relaxed);
    let r = f();
    let after = LIVE_BYTES.load(Ordering::Relaxed);
    let peak = PEAK_BYTES.load(Ordering::Relaxed);
    (r, after as isize - before as isize, peak - before)
}
