//! A counting global allocator, so the benchmark can measure how much heap
//! each index takes: the `quadrat-bench` binary installs [`Counting`], and
//! [`measure`] reports the peak and the retained bytes of a closure.
//!
//! Counting is on only on the thread inside [`measure`] (so the progress
//! bar's drawing thread does not count), and everything else pays one
//! thread-local read and one shared read per allocation. The thread-local
//! flag is a const-initialised `Cell` without a destructor, so reading it
//! never allocates (on targets with native thread-locals, such as Linux).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

/// The system allocator, counting live bytes and their peak while
/// [`measure`] runs. Install it with `#[global_allocator]`.
#[derive(Debug)]
pub struct Counting;

thread_local! {
    /// Whether this thread is inside [`measure`]. Const-initialised and
    /// without a destructor, so reading it never allocates.
    static ENABLED: Cell<bool> = const { Cell::new(false) };
}
static INSTALLED: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// Whether this thread counts. Never panics (a panic may not unwind out of
/// an allocator): a thread whose locals are gone does not count.
fn counting() -> bool {
    ENABLED.try_with(Cell::get).unwrap_or(false)
}

/// Adds `bytes` (negative: frees them) to the live count, and the peak.
fn change(bytes: isize) {
    if counting() {
        let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
        PEAK.fetch_max(live, Relaxed);
    }
}

fn grow(bytes: usize) {
    // Read first: a store on every allocation would make every thread's
    // allocations contend for this cache line.
    if !INSTALLED.load(Relaxed) {
        INSTALLED.store(true, Relaxed);
    }
    change(bytes as isize);
}

fn shrink(bytes: usize) {
    change(-(bytes as isize));
}

// SAFETY: every call is forwarded unchanged to `System`; the counters are
// only bookkeeping and never touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p == ptr {
            // Resized in place: only the difference was ever live.
            change(new_size as isize - layout.size() as isize);
        } else if !p.is_null() {
            // Moved: both blocks were live while the bytes were copied.
            grow(new_size);
            shrink(layout.size());
        }
        p
    }
}

/// Heap use of one closure, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// The most bytes live at once while it ran, over what was live before.
    pub peak: usize,
    /// Bytes still live when it returned (held by its result).
    pub retained: usize,
}

/// Runs `f` and measures its heap use; `None` for the usage when [`Counting`]
/// is not the global allocator (as in unit tests). Counts only what this
/// thread allocates and frees, so `f` should not hand allocations to other
/// threads or free memory allocated before it ran.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Option<Usage>) {
    /// Stops counting when dropped, also when `f` panics.
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            ENABLED.with(|e| e.set(false));
        }
    }
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ENABLED.with(|e| e.set(true));
    let guard = Stop;
    let r = f();
    drop(guard);
    let usage = INSTALLED.load(Relaxed).then(|| Usage {
        peak: PEAK.load(Relaxed).max(0) as usize,
        retained: LIVE.load(Relaxed).max(0) as usize,
    });
    (r, usage)
}
