//! Four candidate boxes tested against one box at once: the kernels of the
//! sweep within a run, of the test between two filtered runs and of the
//! filter (`tree/pairs.rs`), and the four places in a run of a block's
//! hits. On x86-64 each comparison is one SSE instruction over four
//! coordinates, the outcomes come back as a bit mask, and the places are
//! widened from bytes in one register; these are the crate's second kind
//! of `unsafe` block (the first is in `prefetch.rs`). Where SSE (SSE2 for
//! the places) is not enabled at compile time (other architectures, or an
//! x86-64 target without floating-point registers), the same results are
//! computed one lane at a time, by the functions of `scalar`; tests build
//! those on every target and hold both kinds to the same references.

use crate::geom::Aabb;

/// How many candidates a kernel tests at once.
pub(crate) const LANES: usize = 4;

/// Of four candidates, given by their `min.x`, `min.y` and `max.y`, the
/// mask of those that start at or left of `a`'s end along x (lane `t`,
/// bit `t`), and the mask of those that also share a y with `a`. The
/// comparisons are IEEE's `<=`, false where a NaN is involved, as
/// everywhere in the crate (the tree's boxes hold none).
///
/// The sweep within a sorted run reads candidates that start at or right
/// of `a`'s start, so the first mask with the second is whether the
/// closed boxes meet.
#[inline(always)]
pub(crate) fn sweep_masks(
    min_x: &[f32; LANES],
    min_y: &[f32; LANES],
    max_y: &[f32; LANES],
    a: &Aabb,
) -> (usize, usize) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use core::arch::x86_64::{
            _mm_and_ps, _mm_cmple_ps, _mm_movemask_ps, _mm_set1_ps, _mm_setr_ps,
        };
        let ([x0, x1, x2, x3], [l0, l1, l2, l3], [h0, h1, h2, h3]) = (*min_x, *min_y, *max_y);
        // SAFETY: these intrinsics need SSE and nothing else: they compute
        // on values in registers, read and write no memory, and cannot
        // fault. This block is compiled only where SSE is enabled at
        // compile time, so the processor that runs it has SSE.
        #[allow(unsafe_code)]
        let (near, hit) = unsafe {
            let near = _mm_cmple_ps(_mm_setr_ps(x0, x1, x2, x3), _mm_set1_ps(a.max.x));
            let low = _mm_cmple_ps(_mm_setr_ps(l0, l1, l2, l3), _mm_set1_ps(a.max.y));
            let high = _mm_cmple_ps(_mm_set1_ps(a.min.y), _mm_setr_ps(h0, h1, h2, h3));
            let hit = _mm_and_ps(near, _mm_and_ps(low, high));
            (_mm_movemask_ps(near), _mm_movemask_ps(hit))
        };
        (near as usize, hit as usize)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    scalar::sweep_masks(min_x, min_y, max_y, a)
}

/// Of four candidate boxes, given by their coordinates, the mask of those
/// whose closed box shares a point with `a` (lane `t`, bit `t`):
/// [`Aabb::touches`] of each.
#[inline(always)]
pub(crate) fn touch_mask(
    min_x: &[f32; LANES],
    min_y: &[f32; LANES],
    max_x: &[f32; LANES],
    max_y: &[f32; LANES],
    a: &Aabb,
) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use core::arch::x86_64::{
            _mm_and_ps, _mm_cmple_ps, _mm_movemask_ps, _mm_set1_ps, _mm_setr_ps,
        };
        let lanes = |v: &[f32; LANES]| (v[0], v[1], v[2], v[3]);
        let (x0, y0, x1, y1) = (lanes(min_x), lanes(min_y), lanes(max_x), lanes(max_y));
        // SAFETY: as in `sweep_masks`: SSE only, on values in registers.
        #[allow(unsafe_code)]
        let hit = unsafe {
            let set = |(a, b, c, d): (f32, f32, f32, f32)| _mm_setr_ps(a, b, c, d);
            let x = _mm_and_ps(
                _mm_cmple_ps(set(x0), _mm_set1_ps(a.max.x)),
                _mm_cmple_ps(_mm_set1_ps(a.min.x), set(x1)),
            );
            let y = _mm_and_ps(
                _mm_cmple_ps(set(y0), _mm_set1_ps(a.max.y)),
                _mm_cmple_ps(_mm_set1_ps(a.min.y), set(y1)),
            );
            _mm_movemask_ps(_mm_and_ps(x, y))
        };
        hit as usize
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    scalar::touch_mask(min_x, min_y, max_x, max_y, a)
}

/// Of four boxes, the mask of those that share a point with `area`
/// ([`Aabb::touches`]) and the mask of those that start right of its end
/// along x (lane `t`, bit `t`).
#[inline(always)]
pub(crate) fn filter_masks(boxes: [&Aabb; LANES], area: &Aabb) -> (usize, usize) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use core::arch::x86_64::{
            _mm_and_ps, _mm_cmple_ps, _mm_cmplt_ps, _mm_movehl_ps, _mm_movelh_ps, _mm_movemask_ps,
            _mm_set1_ps, _mm_setr_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
        };
        let [p, q, r, t] = boxes.map(|b| (b.min.x, b.min.y, b.max.x, b.max.y));
        // SAFETY: as in `sweep_masks`: SSE only, on values in registers.
        #[allow(unsafe_code)]
        let (keep, past) = unsafe {
            let set = |(a, b, c, d): (f32, f32, f32, f32)| _mm_setr_ps(a, b, c, d);
            let (b0, b1, b2, b3) = (set(p), set(q), set(r), set(t));
            // The transpose: one register a coordinate, a lane a box.
            let (t0, t1) = (_mm_unpacklo_ps(b0, b1), _mm_unpacklo_ps(b2, b3));
            let (t2, t3) = (_mm_unpackhi_ps(b0, b1), _mm_unpackhi_ps(b2, b3));
            let (min_x, min_y) = (_mm_movelh_ps(t0, t1), _mm_movehl_ps(t1, t0));
            let (max_x, max_y) = (_mm_movelh_ps(t2, t3), _mm_movehl_ps(t3, t2));
            let end = _mm_set1_ps(area.max.x);
            let x = _mm_and_ps(
                _mm_cmple_ps(min_x, end),
                _mm_cmple_ps(_mm_set1_ps(area.min.x), max_x),
            );
            let y = _mm_and_ps(
                _mm_cmple_ps(min_y, _mm_set1_ps(area.max.y)),
                _mm_cmple_ps(_mm_set1_ps(area.min.y), max_y),
            );
            (
                _mm_movemask_ps(_mm_and_ps(x, y)),
                _mm_movemask_ps(_mm_cmplt_ps(end, min_x)),
            )
        };
        (keep as usize, past as usize)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    scalar::filter_masks(boxes, area)
}

/// The four places `base + b` (wrapping), for each byte `b` of `word`
/// from the low one: the places in a run that a block's word of the pair
/// walk's hit table (`pairs::HITS`) names, from the block's first place
/// `base`. On x86-64 the bytes are widened and added in one register;
/// shifting, masking and adding each byte apart took the filter of the
/// pair walk 9.7M of the 143.3M instructions of five walks over 100k
/// uniform boxes, and the walks took 137.4M with this (callgrind).
#[inline(always)]
pub(crate) fn widen_places(word: u32, base: u32) -> [u32; LANES] {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::{
            __m128i, _mm_add_epi32, _mm_cvtsi32_si128, _mm_set1_epi32, _mm_setzero_si128,
            _mm_unpacklo_epi8, _mm_unpacklo_epi16,
        };
        // SAFETY: these intrinsics need SSE2 and nothing else: they compute
        // on values in registers, read and write no memory, and cannot
        // fault. This block is compiled only where SSE2 is enabled at
        // compile time, so the processor that runs it has SSE2. The
        // transmute reads the 16 bytes of a register as four `u32`, which
        // have the same size and for which every bit pattern is a value.
        #[allow(unsafe_code)]
        unsafe {
            let zero = _mm_setzero_si128();
            let bytes = _mm_cvtsi32_si128(word as i32);
            let wide = _mm_unpacklo_epi16(_mm_unpacklo_epi8(bytes, zero), zero);
            let sum = _mm_add_epi32(wide, _mm_set1_epi32(base as i32));
            core::mem::transmute::<__m128i, [u32; LANES]>(sum)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    scalar::widen_places(word, base)
}

/// The kernels one lane at a time: what runs where SSE (SSE2 for the
/// places) is not enabled at compile time. Tests compile them on every
/// target, so that they are checked lane by lane against the same plain
/// references as the SSE kernels, on machines that run only the latter.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
mod scalar {
    use super::{Aabb, LANES};

    /// [`super::sweep_masks`], one lane at a time.
    #[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse"))))]
    #[inline(always)]
    pub(super) fn sweep_masks(
        min_x: &[f32; LANES],
        min_y: &[f32; LANES],
        max_y: &[f32; LANES],
        a: &Aabb,
    ) -> (usize, usize) {
        let mut near = 0;
        let mut hit = 0;
        for t in 0..LANES {
            let in_x = min_x[t] <= a.max.x;
            near |= usize::from(in_x) << t;
            hit |= usize::from(in_x & (min_y[t] <= a.max.y) & (a.min.y <= max_y[t])) << t;
        }
        (near, hit)
    }

    /// [`super::touch_mask`], one lane at a time.
    #[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse"))))]
    #[inline(always)]
    pub(super) fn touch_mask(
        min_x: &[f32; LANES],
        min_y: &[f32; LANES],
        max_x: &[f32; LANES],
        max_y: &[f32; LANES],
        a: &Aabb,
    ) -> usize {
        let mut hit = 0;
        for t in 0..LANES {
            let b = Aabb {
                min: crate::geom::Vec2::new(min_x[t], min_y[t]),
                max: crate::geom::Vec2::new(max_x[t], max_y[t]),
            };
            hit |= usize::from(a.touches(&b)) << t;
        }
        hit
    }

    /// [`super::filter_masks`], one lane at a time.
    #[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse"))))]
    #[inline(always)]
    pub(super) fn filter_masks(boxes: [&Aabb; LANES], area: &Aabb) -> (usize, usize) {
        let (mut keep, mut past) = (0, 0);
        for (t, b) in boxes.iter().enumerate() {
            keep |= usize::from(b.touches(area)) << t;
            past |= usize::from(area.max.x < b.min.x) << t;
        }
        (keep, past)
    }

    /// [`super::widen_places`], one byte at a time.
    #[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
    #[inline(always)]
    pub(super) fn widen_places(word: u32, base: u32) -> [u32; LANES] {
        let b = word.to_le_bytes();
        core::array::from_fn(|t| base.wrapping_add(u32::from(b[t])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coordinates with every relation the comparisons can meet: equal
    /// values, signed zeros, infinities, the extremes of `f32`, NaN.
    const VALUES: [f32; 11] = [
        f32::NEG_INFINITY,
        -f32::MAX,
        -1.5,
        -0.0,
        0.0,
        f32::MIN_POSITIVE,
        1.0,
        1.5,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
    ];

    /// The mask of the lanes for which `test` holds.
    fn mask(test: impl Fn(usize) -> bool) -> usize {
        (0..LANES).filter(|&t| test(t)).map(|t| 1 << t).sum()
    }

    /// The next number of a xorshift sequence from `seed`.
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// The kernels a test checks: those the crate runs on this target, and
    /// the ones it runs where SSE is not.
    struct Kernels {
        name: &'static str,
        sweep: fn(&Lanes, &Lanes, &Lanes, &Aabb) -> (usize, usize),
        touch: fn(&Lanes, &Lanes, &Lanes, &Lanes, &Aabb) -> usize,
        filter: fn([&Aabb; LANES], &Aabb) -> (usize, usize),
        widen: fn(u32, u32) -> [u32; LANES],
    }

    /// One coordinate of four candidates.
    type Lanes = [f32; LANES];

    const KERNELS: [Kernels; 2] = [
        Kernels {
            name: "this target's",
            sweep: sweep_masks,
            touch: touch_mask,
            filter: filter_masks,
            widen: widen_places,
        },
        Kernels {
            name: "scalar",
            sweep: scalar::sweep_masks,
            touch: scalar::touch_mask,
            filter: scalar::filter_masks,
            widen: scalar::widen_places,
        },
    ];

    #[test]
    fn the_kernels_give_the_masks_of_the_tests_lane_by_lane() {
        for k in &KERNELS {
            let mut seed = 0x9E37_79B9_7F4A_7C15u64;
            let mut pick = || VALUES[(next(&mut seed) % VALUES.len() as u64) as usize];
            for _ in 0..200_000 {
                let a = Aabb::new([pick(), pick()], [pick(), pick()]);
                let mut four = || [pick(), pick(), pick(), pick()];
                let (x0, y0, x1, y1) = (four(), four(), four(), four());
                let near = mask(|t| x0[t] <= a.max.x);
                let meets_y = mask(|t| y0[t] <= a.max.y && a.min.y <= y1[t]);
                let case = format!("{} {a:?} {x0:?} {y0:?} {x1:?} {y1:?}", k.name);
                assert_eq!(
                    (k.sweep)(&x0, &y0, &y1, &a),
                    (near, near & meets_y),
                    "{case}"
                );
                // The closed boxes share a point: written out here, not
                // with `Aabb::touches`, which the scalar kernels use.
                let touching = near & meets_y & mask(|t| a.min.x <= x1[t]);
                assert_eq!((k.touch)(&x0, &y0, &x1, &y1, &a), touching, "{case}");
                let boxes: [Aabb; LANES] =
                    core::array::from_fn(|t| Aabb::new([x0[t], y0[t]], [x1[t], y1[t]]));
                let past = mask(|t| a.max.x < x0[t]);
                let boxes = [&boxes[0], &boxes[1], &boxes[2], &boxes[3]];
                assert_eq!((k.filter)(boxes, &a), (touching, past), "{case}");
            }
        }
    }

    #[test]
    fn widened_places_are_the_bytes_added_to_the_base() {
        for k in &KERNELS {
            let mut seed = 0x2545_F491_4F6C_DD1Du64;
            let mut next = || next(&mut seed);
            let bases = [0, 1, 63, 64, 255, 256, 1 << 20, u32::MAX - 255, u32::MAX];
            for _ in 0..20_000 {
                let word = next() as u32;
                let base = match next() % 3 {
                    0 => bases[(next() % bases.len() as u64) as usize],
                    _ => next() as u32,
                };
                let want: [u32; LANES] =
                    core::array::from_fn(|t| base.wrapping_add((word >> (8 * t)) & 0xFF));
                assert_eq!((k.widen)(word, base), want, "{} {word:#x} {base}", k.name);
            }
            assert_eq!((k.widen)(0x0302_0100, 7), [7, 8, 9, 10], "{}", k.name);
            assert_eq!((k.widen)(0xFF00_FF00, 1), [1, 256, 1, 256], "{}", k.name);
        }
    }

    #[test]
    fn each_lane_has_its_own_bit() {
        for k in &KERNELS {
            let a = Aabb::new([0.0, 0.0], [1.0, 1.0]);
            // Lane 0 meets a; lane 1 starts right of it; lane 2 lies above
            // it; lane 3 lies below it.
            let x = [0.5, 2.0, 0.5, 0.5];
            let lo = [0.5, 0.5, 2.0, -3.0];
            let hi = [0.7, 0.7, 3.0, -2.0];
            assert_eq!((k.sweep)(&x, &lo, &hi, &a), (0b1101, 0b0001), "{}", k.name);
            let right = [0.6, 2.5, 0.6, 0.6];
            assert_eq!((k.touch)(&x, &lo, &right, &hi, &a), 0b0001, "{}", k.name);
            let boxes: [Aabb; LANES] =
                core::array::from_fn(|t| Aabb::new([x[t], lo[t]], [right[t], hi[t]]));
            let boxes = [&boxes[0], &boxes[1], &boxes[2], &boxes[3]];
            assert_eq!((k.filter)(boxes, &a), (0b0001, 0b0010), "{}", k.name);
            // Touching edges meet (closed boxes).
            let x = [1.0; 4];
            let lo = [1.0, -1.0, 1.0, 0.0];
            let hi = [2.0, 0.0, 1.0, 1.0];
            assert_eq!((k.sweep)(&x, &lo, &hi, &a), (0b1111, 0b1111), "{}", k.name);
        }
    }
}
