//! The key and sort engine of the bulk build: Morton (Z-order) codes of
//! the items' centres, a radix sort of them (on one thread, or on rayon's
//! pool with the same order), and the gather of the items in that order.
//! The build's top-down partition (`build.rs`) then finds nearly every
//! entry in its bucket already. Also the sample that tells whether items
//! are in that order already (`nearly_z_ordered`), as a refill in the last
//! tree's order is.

#[cfg(feature = "parallel")]
use super::parallel::{map_chunks, map_parts};
use crate::geom::{Aabb, Vec2};

/// Fills `keys` with `(code << 32) | index` for each of `items` (entries, or
/// bare boxes; `aabb` reads the box), where `code` is the Morton (Z-order)
/// code of its centre quantized to 16 bits per axis over `world`, and sorts
/// them by code with a radix sort (`spare` is its scratch). Gathering the entries in that order lets the
/// top-down partition find nearly every entry in its bucket already. The
/// codes only approximate the tree's exact placement; the partition that
/// follows is exact either way.
fn morton_order<E: Sync>(
    items: &[E],
    aabb: impl Fn(&E) -> Aabb + Sync,
    w: Aabb,
    parallel: bool,
    keys: &mut Vec<u64>,
    spare: &mut Vec<u64>,
) {
    let grid = Grid::new(w, 65535.0, 65535);
    let key = |(i, e): (usize, &E)| (u64::from(grid.code(aabb(e).center())) << 32) | i as u64;
    #[cfg(feature = "parallel")]
    if parallel {
        par_sort_keys(items, key, keys, spare);
        return;
    }
    #[cfg(not(feature = "parallel"))]
    let _ = parallel;
    keys.clear();
    keys.extend(items.iter().enumerate().map(key));
    radix_sort_codes(keys, spare);
}

/// Appends `make(i)` for every `i` in `0..items.len()` to `out`, in the
/// order [`morton_order`] gives the items from 1,024 on, in their own
/// order below that (where the sort does not pay). The sort's buffers are
/// `kept` for the next call when given; otherwise they are local, and the
/// radix sort's spare half is freed before the gather, so that a build's
/// peak does not hold it (at 1M items, 8 MB).
pub(crate) fn gather_in_morton_order<E: Sync, O: Send>(
    items: &[E],
    aabb: impl Fn(&E) -> Aabb + Sync,
    make: impl Fn(usize) -> O + Sync + Send,
    world: Aabb,
    parallel: bool,
    kept: Option<(&mut Vec<u64>, &mut Vec<u64>)>,
    out: &mut Vec<O>,
) {
    if items.len() < PRESORT_MIN {
        out.extend((0..items.len()).map(make));
        return;
    }
    let frees = kept.is_none();
    let (mut own_keys, mut own_spare) = (Vec::new(), Vec::new());
    let (keys, spare) = kept.unwrap_or((&mut own_keys, &mut own_spare));
    morton_order(items, aabb, world, parallel, keys, spare);
    if frees {
        *spare = Vec::new();
        // Only the indices are left to read: kept as 4 bytes each, where a
        // key takes 8, so that the gather holds half as much for them (at
        // 1M items into an empty tree, the gather's peak fell from 68 to
        // 64 MB, below that of the build and its keys, then 65.8).
        let order: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
        *keys = Vec::new();
        gather_by(&order, |&i| i as usize, items, make, parallel, out);
        return;
    }
    let at = |&k: &u64| (k & 0xFFFF_FFFF) as usize;
    gather_by(keys, at, items, make, parallel, out);
}

/// How far ahead of its reads [`gather_by`] prefetches (and
/// `QuadTree::gather_by_slot`, and `par_update_all`'s rewrite of the
/// entries).
pub(crate) const AHEAD: usize = 16;

/// From how many items a bulk build sorts them along the Morton curve
/// first (or takes them in an order that follows it already, see
/// [`nearly_z_ordered`]): below, the partition sorts them in the cache
/// about as fast.
pub(crate) const PRESORT_MIN: usize = 1024;

/// From how many bytes of items [`gather_by`] prefetches: below, they
/// mostly sit in the cache, and the prefetches only add instructions (at
/// 100k boxes, 2% of `insert_many`'s).
pub(crate) const PREFETCH_MIN: usize = 4 << 20;

/// Appends `make(at(k))` for every `k` of `order` to `out`, where `make(i)`
/// reads `items[i]`: independent reads in random places, so the item
/// [`AHEAD`] places on is prefetched when `items` are too many for the
/// cache ([`PREFETCH_MIN`]).
fn gather_by<K: Sync, E: Sync, O: Send>(
    order: &[K],
    at: impl Fn(&K) -> usize + Sync + Send,
    items: &[E],
    make: impl Fn(usize) -> O + Sync + Send,
    parallel: bool,
    out: &mut Vec<O>,
) {
    let ahead = |i: usize| {
        if let Some(e) = order.get(i + AHEAD).and_then(|next| items.get(at(next))) {
            crate::prefetch::prefetch(e);
        }
    };
    let fetched = |(i, k): (usize, &K)| {
        ahead(i);
        make(at(k))
    };
    let plain = |k: &K| make(at(k));
    let far = core::mem::size_of_val(items) >= PREFETCH_MIN;
    #[cfg(feature = "parallel")]
    if parallel {
        use rayon::prelude::*;
        if far {
            out.par_extend(order.par_iter().enumerate().map(&fetched));
        } else {
            out.par_extend(order.par_iter().map(&plain));
        }
        return;
    }
    #[cfg(not(feature = "parallel"))]
    let _ = parallel;
    if far {
        out.extend(order.iter().enumerate().map(fetched));
    } else {
        out.extend(order.iter().map(plain));
    }
}

/// Bits of the code each radix pass sorts on.
const DIGIT: u32 = 10;

/// Buckets of one radix pass.
const BUCKETS: usize = 1 << DIGIT;

/// The lowest bit of a key that the radix sort orders on: it sorts the
/// code's top `2 * DIGIT` bits, in two passes.
const LOWEST: u32 = 64 - 2 * DIGIT;

/// The shifts of the two passes, least significant digit first.
const SHIFTS: [u32; 2] = [LOWEST, LOWEST + DIGIT];

/// The bucket of key `k` in the radix pass that sorts on bits `shift..`.
#[inline]
fn digit(k: u64, shift: u32) -> usize {
    ((k >> shift) as usize) & (BUCKETS - 1)
}

/// Chunks of keys per thread of the pool in [`par_sort_keys`]'s first two
/// passes, and bucket ranges per thread in its third: a few more jobs than
/// threads, so that a thread that starts late finds a share left.
#[cfg(feature = "parallel")]
const JOBS_PER_THREAD: usize = 4;

/// Fills `keys` with the key of each of `items` (as `key` makes it) and
/// sorts them as [`radix_sort_codes`] does, on rayon's pool, in three
/// passes of [`map_parts`] jobs (so the calling thread starts at once):
/// each chunk of the items makes its keys and counts their top digits;
/// each chunk scatters its keys by top digit into the part of every
/// bucket that the chunks before it leave free (`spare`), so the order
/// within a bucket is the items' order; then each range of buckets sorts
/// every bucket by the lower digit into `keys`, a counting sort in cache
/// (about `n / 1024` keys a bucket when the items are spread; a crowded
/// bucket is one job). The order is the one-thread sort's, ties included.
#[cfg(feature = "parallel")]
fn par_sort_keys<E: Sync>(
    items: &[E],
    key: impl Fn((usize, &E)) -> u64 + Sync,
    keys: &mut Vec<u64>,
    spare: &mut Vec<u64>,
) {
    let n = items.len();
    zeroed(keys, n);
    let size = n
        .div_ceil(rayon::current_num_threads() * JOBS_PER_THREAD)
        .max(1);
    let counts = map_chunks(keys, size, |c, chunk| {
        let mut count = [0u32; BUCKETS];
        let from = c * size;
        for (i, (k, e)) in chunk.iter_mut().zip(&items[from..]).enumerate() {
            *k = key((from + i, e));
            count[digit(*k, SHIFTS[1])] += 1;
        }
        count
    });
    bucket_sort(keys, spare, &counts, size);
}

/// The last two passes of [`par_sort_keys`], given the count of each top
/// digit in each chunk of `size` keys.
#[cfg(feature = "parallel")]
fn bucket_sort(keys: &mut [u64], spare: &mut Vec<u64>, counts: &[[u32; BUCKETS]], size: usize) {
    let n = keys.len();
    zeroed(spare, n);
    // Cut `spare` into one slice per (bucket, chunk), bucket-major, and
    // hand each chunk its slice of every bucket; note where buckets start.
    let mut parts: Vec<Vec<&mut [u64]>> = (0..counts.len())
        .map(|_| Vec::with_capacity(BUCKETS))
        .collect();
    let mut starts = Vec::with_capacity(BUCKETS + 1);
    let mut rest: &mut [u64] = spare;
    let mut at = 0;
    for b in 0..BUCKETS {
        starts.push(at);
        for (c, count) in counts.iter().enumerate() {
            let (part, tail) = rest.split_at_mut(count[b] as usize);
            parts[c].push(part);
            rest = tail;
            at += count[b] as usize;
        }
    }
    starts.push(at);
    debug_assert_eq!(counts.len(), keys.chunks(size).len(), "a count per chunk");
    let chunks: Vec<(&[u64], Vec<&mut [u64]>)> = keys.chunks(size).zip(parts).collect();
    map_parts(chunks, |_, (chunk, mut parts)| {
        let mut at = [0u32; BUCKETS];
        for &k in chunk {
            let b = digit(k, SHIFTS[1]);
            parts[b][at[b] as usize] = k;
            at[b] += 1;
        }
    });
    // Ranges of whole buckets of about equal size, each sorted by the
    // lower digit from `spare` into the same places of `keys`.
    let jobs = counts.len();
    let mut ranges = Vec::with_capacity(jobs);
    let (mut from, mut keys_left, mut spare_left) = (0, keys, &spare[..]);
    for j in 1..=jobs {
        let goal = (n as u64 * j as u64 / jobs as u64) as usize;
        let mut to = from;
        while to < BUCKETS && (starts[to + 1] <= goal || j == jobs) {
            to += 1;
        }
        let len = starts[to] - starts[from];
        let (out, tail) = keys_left.split_at_mut(len);
        let (input, spare_tail) = spare_left.split_at(len);
        ranges.push((out, input, &starts[from..=to]));
        (from, keys_left, spare_left) = (to, tail, spare_tail);
    }
    map_parts(ranges, |_, (out, input, starts)| {
        let base = starts[0];
        let mut offsets = [0u32; BUCKETS];
        for w in starts.windows(2) {
            let (lo, hi) = (w[0] - base, w[1] - base);
            offsets.fill(0);
            for &k in &input[lo..hi] {
                offsets[digit(k, SHIFTS[0])] += 1;
            }
            let mut sum = lo as u32;
            for o in &mut offsets {
                let c = *o;
                *o = sum;
                sum += c;
            }
            for &k in &input[lo..hi] {
                let b = digit(k, SHIFTS[0]);
                out[offsets[b] as usize] = k;
                offsets[b] += 1;
            }
        }
    });
}

/// Makes `v` `n` long, for jobs that overwrite every element: in place
/// when it has room (keeping what it holds, so that only the part beyond
/// its length is written), else as a fresh allocation of zeros, which the
/// allocator usually takes from pages the kernel has zeroed, and which the
/// jobs that write them then fault in (where `resize` on the calling
/// thread would write every page first, alone).
#[cfg(feature = "parallel")]
fn zeroed(v: &mut Vec<u64>, n: usize) {
    if v.capacity() >= n {
        v.truncate(n);
        v.resize(n, 0);
    } else {
        *v = vec![0; n];
    }
}

/// Sorts `(code << 32) | index` keys by the top `2 * DIGIT` (20) bits of
/// their 32-bit code: two LSD radix passes of [`DIGIT`] bits through
/// `spare`. The lower bits order cells more than 10 levels down, which the
/// partition sorts out cheaply, on ranges that fit in cache. Two passes of
/// 11 bits took about twice the time at 1M keys: each pass scatters into
/// 2,048 places at once, more pages than the TLB holds
/// (ARCHITECTURE.md, *Bulk build*).
fn radix_sort_codes(keys: &mut Vec<u64>, spare: &mut Vec<u64>) {
    let mut offsets = [[0u32; BUCKETS]; 2];
    for k in keys.iter() {
        offsets[0][digit(*k, SHIFTS[0])] += 1;
        offsets[1][digit(*k, SHIFTS[1])] += 1;
    }
    spare.clear();
    spare.resize(keys.len(), 0);
    for (shift, offsets) in SHIFTS.into_iter().zip(offsets.iter_mut()) {
        let mut sum = 0u32;
        for o in offsets.iter_mut() {
            let c = *o;
            *o = sum;
            sum += c;
        }
        for &k in keys.iter() {
            let b = digit(k, shift);
            spare[offsets[b] as usize] = k;
            offsets[b] += 1;
        }
        core::mem::swap(keys, spare);
    }
}

/// How many places [`nearly_z_ordered`] samples at most.
const SAMPLES: usize = 1024;

/// `true` when `places` places, read in order, hold boxes whose centres
/// nearly follow a Z-order curve at a coarse scale, as a tree's order of
/// its items does. `aabb(i)` is the box at place `i`, or `None` for a gap;
/// `items` is how many places hold one. A build can then start from that
/// order, without sorting along the curve first (see
/// `QuadTree::gather_by_slot`).
///
/// It reads up to [`SAMPLES`] evenly spaced places, one in 16 or more.
/// Each sample's cell is found on a coarse grid, from 2 × 2 cells up to
/// 32 × 32 cells, with about 256 items a cell or more: coarser than a
/// tree's leaves. The order holds when at most one sample in eight comes
/// before the one before it along the curve. Items in no order do that
/// about every other time. A tree's order hardly ever does: none of the
/// samples of a refill at 100k and 1M boxes in the benchmark's scenes,
/// against about half after a first fill. Too few samples
/// with a box (under 16), or all of them in one cell, say nothing of the
/// order, and it does not hold.
pub(crate) fn nearly_z_ordered(
    places: usize,
    items: usize,
    aabb: impl Fn(usize) -> Option<Aabb>,
    world: Aabb,
) -> bool {
    let samples = (places / 16).clamp(1, SAMPLES);
    let mut levels = 1u32;
    while levels < 5 && items >> (2 * (levels + 1)) >= 256 {
        levels += 1;
    }
    let side = 1u32 << levels;
    let grid = Grid::new(world, side as f32, side - 1);
    let (mut seen, mut ups, mut downs, mut last) = (0usize, 0usize, 0usize, 0u32);
    for j in 0..samples {
        // In `u64`: `j * places` may not fit a 32-bit `usize`.
        let at = (j as u64 * places as u64 / samples as u64) as usize;
        let Some(b) = aabb(at) else {
            continue;
        };
        let code = grid.code(b.center());
        if seen > 0 {
            ups += usize::from(code > last);
            downs += usize::from(code < last);
        }
        seen += 1;
        last = code;
    }
    seen >= 16 && ups > 0 && downs * 8 <= seen
}

/// A square grid over a world whose cells are numbered along the Z curve:
/// a centre's coordinates are scaled to `0..=top` on each axis (clamped),
/// and their bits interleaved.
struct Grid {
    lo: Vec2,
    scale: Vec2,
    top: f32,
}

impl Grid {
    /// `cells / width` and `cells / height` are the scales.
    fn new(world: Aabb, cells: f32, top: u32) -> Grid {
        Grid {
            lo: world.min,
            scale: Vec2::new(cells / world.width(), cells / world.height()),
            top: top as f32,
        }
    }

    /// The Z-order code of the cell holding `c` (16 bits an axis at most).
    ///
    /// Each coordinate is clamped by `max` and `min`, which give what
    /// `clamp` gives here (a NaN, `0 × ∞` in a world too wide or too narrow
    /// for `f32`, becomes 0, as its conversion made it) without `clamp`'s
    /// check of its bounds on every call; and both axes are spread at once.
    #[inline]
    fn code(&self, c: Vec2) -> u32 {
        let q = |v: f32, lo: f32, s: f32| ((v - lo) * s).max(0.0).min(self.top) as u32;
        interleave(
            q(c.x, self.lo.x, self.scale.x),
            q(c.y, self.lo.y, self.scale.y),
        )
    }
}

/// The 16 low bits of `x` on the even bits of the result and those of `y`
/// on the odd bits: both spread in one `u64`, `x` in its low half and `y`
/// in its high half.
#[inline]
fn interleave(x: u32, y: u32) -> u32 {
    let mut v = u64::from(x & 0xFFFF) | (u64::from(y & 0xFFFF) << 32);
    v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF;
    v = (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    v = (v | (v << 2)) & 0x3333_3333_3333_3333;
    v = (v | (v << 1)) & 0x5555_5555_5555_5555;
    (v as u32) | (((v >> 32) as u32) << 1)
}

#[cfg(test)]
mod tests {
    use super::{DIGIT, Grid, LOWEST, radix_sort_codes};
    use crate::geom::{Aabb, Vec2};

    /// A xorshift generator, so that the tests need no dependency.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// Key sets of many shapes: few distinct codes (most keys tie on the
    /// sorted bits), codes spread over all 32 bits, and codes that differ
    /// only below the sorted bits. The index in the low half tells tied
    /// keys apart, as the build's keys do.
    fn key_sets() -> Vec<Vec<u64>> {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut sets = Vec::new();
        for len in [0, 1, 2, 3, 1_025, 4_097, 30_001, 200_003] {
            let few: Vec<u64> = (0..len)
                .map(|i| ((next() % 97) << (LOWEST + DIGIT) | (next() % 5) << LOWEST) | i as u64)
                .collect();
            let spread: Vec<u64> = (0..len)
                .map(|i| (next() & !0xFFFF_FFFF) | i as u64)
                .collect();
            let below: Vec<u64> = (0..len)
                .map(|i| ((next() % 3) << LOWEST | (next() % 4096) << 32) | i as u64)
                .collect();
            sets.extend([few, spread, below]);
        }
        sets
    }

    /// The radix sort is a stable sort on the code's top `2 * DIGIT` bits.
    #[test]
    fn radix_sort_is_a_stable_sort_on_the_top_bits() {
        for keys in key_sets() {
            let mut expected = keys.clone();
            expected.sort_by_key(|&k| k >> LOWEST);
            let (mut got, mut spare) = (keys, Vec::new());
            radix_sort_codes(&mut got, &mut spare);
            assert_eq!(got, expected, "{} keys", got.len());
        }
    }

    /// The parallel sort gives the one-thread sort's order exactly, ties
    /// included, for lengths that split unevenly into chunks, on pools of
    /// 1 to 4 threads, whether the buffers are fresh or reused.
    #[cfg(feature = "parallel")]
    #[test]
    fn parallel_radix_sort_is_the_sequential_sort() {
        for threads in 1..=4 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            // Buffers kept from the last (longer) set, stale contents and all.
            let (mut kept, mut kept_spare) = (Vec::new(), Vec::new());
            for keys in key_sets().into_iter().rev() {
                let (mut seq, mut spare) = (keys.clone(), Vec::new());
                radix_sort_codes(&mut seq, &mut spare);
                let (mut par, mut spare) = (Vec::new(), Vec::new());
                pool.install(|| super::par_sort_keys(&keys, |(_, &k)| k, &mut par, &mut spare));
                assert_eq!(par, seq, "{threads} threads, {} keys", par.len());
                pool.install(|| {
                    super::par_sort_keys(&keys, |(_, &k)| k, &mut kept, &mut kept_spare);
                });
                assert_eq!(kept, seq, "{threads} threads, {} keys, kept", keys.len());
            }
        }
    }

    /// The code as `clamp` and a spread per axis made it.
    fn code_by_axis(grid: &Grid, c: Vec2) -> u32 {
        let spread = |v: u32| {
            let mut v = v & 0xFFFF;
            v = (v | (v << 8)) & 0x00FF_00FF;
            v = (v | (v << 4)) & 0x0F0F_0F0F;
            v = (v | (v << 2)) & 0x3333_3333;
            (v | (v << 1)) & 0x5555_5555
        };
        let q = |v: f32, lo: f32, s: f32| ((v - lo) * s).clamp(0.0, grid.top) as u32;
        spread(q(c.x, grid.lo.x, grid.scale.x)) | (spread(q(c.y, grid.lo.y, grid.scale.y)) << 1)
    }

    #[test]
    fn codes_are_those_of_each_axis_spread_apart() {
        let mut next = xorshift(0x1234_5678_9ABC_DEF1);
        let worlds = [
            Aabb::new([0.0, 0.0], [1000.0, 1000.0]),
            Aabb::new([-3.0, 2.0], [5.0, 2.5]),
            Aabb::new([0.0, 0.0], [f32::from_bits(3), f32::from_bits(9)]),
            // Wider than `f32` holds: the scale is 0, and far centres give NaN.
            Aabb::new([-f32::MAX, -f32::MAX], [f32::MAX, f32::MAX]),
        ];
        for world in worlds {
            // The presort's grid, and every grid `nearly_z_ordered` makes.
            let sides = [2u32, 4, 8, 16, 32].map(|side| (side as f32, side - 1));
            for (cells, top) in [(65535.0, 65535)].into_iter().chain(sides) {
                let grid = Grid::new(world, cells, top);
                let check = |c: Vec2| {
                    assert_eq!(grid.code(c), code_by_axis(&grid, c), "{c:?} in {world:?}");
                };
                for _ in 0..20_000 {
                    // Inside and around the world, and anywhere in `f32`.
                    let (u, v) = ((next() >> 40) as f32, (next() >> 40) as f32);
                    let f = 1.0 / (1u64 << 24) as f32;
                    let w = world.max - world.min;
                    check(Vec2::new(
                        world.min.x + (u * f * 3.0 - 1.0) * w.x,
                        world.min.y + (v * f * 3.0 - 1.0) * w.y,
                    ));
                    let (a, b) = (f32::from_bits(next() as u32), f32::from_bits(next() as u32));
                    if a.is_finite() && b.is_finite() {
                        check(Vec2::new(a, b));
                    }
                }
                for c in [
                    world.min,
                    world.max,
                    world.center(),
                    Vec2::new(f32::MAX, -f32::MAX),
                ] {
                    check(c);
                }
            }
        }
    }
}
