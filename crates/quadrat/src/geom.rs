//! Small `Copy` geometry types: [`Vec2`], [`Aabb`], [`Circle`], [`Ray`].
//!
//! All shapes are **closed**: boxes that touch at an edge or a corner
//! intersect, and a point on a box's edge is inside it.

use crate::error::Error;

/// A 2D vector or point with `f32` coordinates.
///
/// Converts from `[f32; 2]` and `(f32, f32)`, so every function taking
/// `impl Into<Vec2>` accepts those too.
///
/// ```
/// use quadrat::Vec2;
/// let a = Vec2::new(1.0, 2.0);
/// let b: Vec2 = [1.0, 2.0].into();
/// let c: Vec2 = (1.0, 2.0).into();
/// assert_eq!(a, b);
/// assert_eq!(b, c);
/// assert_eq!(a + b, Vec2::new(2.0, 4.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Vec2 {
    /// Horizontal coordinate.
    pub x: f32,
    /// Vertical coordinate.
    pub y: f32,
}

impl Vec2 {
    /// The origin, `(0, 0)`.
    pub const ZERO: Vec2 = Vec2 { x: 0.0, y: 0.0 };

    /// Creates a vector from its coordinates.
    #[inline]
    #[must_use]
    pub const fn new(x: f32, y: f32) -> Vec2 {
        Vec2 { x, y }
    }

    /// Creates a vector with both coordinates set to `v`.
    #[inline]
    #[must_use]
    pub const fn splat(v: f32) -> Vec2 {
        Vec2 { x: v, y: v }
    }

    /// Dot product.
    ///
    /// ```
    /// # use quadrat::Vec2;
    /// let v = Vec2::new(3.0, 4.0);
    /// assert_eq!(v.dot(Vec2::new(1.0, 0.0)), 3.0);
    /// assert_eq!((v.length(), v.length_squared()), (5.0, 25.0));
    /// assert_eq!(v.min(Vec2::splat(3.5)), Vec2::new(3.0, 3.5));
    /// assert_eq!(v.max(Vec2::ZERO), v);
    /// ```
    #[inline]
    #[must_use]
    pub fn dot(self, other: Vec2) -> f32 {
        self.x * other.x + self.y * other.y
    }

    /// Squared Euclidean length.
    #[inline]
    #[must_use]
    pub fn length_squared(self) -> f32 {
        self.dot(self)
    }

    /// Euclidean length.
    #[inline]
    #[must_use]
    pub fn length(self) -> f32 {
        self.x.hypot(self.y)
    }

    /// Component-wise minimum.
    #[inline]
    #[must_use]
    pub fn min(self, other: Vec2) -> Vec2 {
        Vec2::new(self.x.min(other.x), self.y.min(other.y))
    }

    /// Component-wise maximum.
    #[inline]
    #[must_use]
    pub fn max(self, other: Vec2) -> Vec2 {
        Vec2::new(self.x.max(other.x), self.y.max(other.y))
    }

    /// `true` when both coordinates are finite (neither NaN nor infinite).
    #[inline]
    #[must_use]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }

    /// The vector scaled to length 1, pointing the same way.
    ///
    /// **The zero vector gives NaN coordinates**, as glam's `normalize`
    /// does, and so does a vector with an infinite or NaN coordinate. When
    /// the vector may be zero, use [`try_normalize`](Vec2::try_normalize)
    /// (`None`) or [`normalize_or_zero`](Vec2::normalize_or_zero) (zero)
    /// instead.
    ///
    /// It is computed in `f64`, where no finite `f32` coordinate overflows
    /// or underflows, so any nonzero finite vector, however small (subnormal)
    /// or large, gives a unit vector to within `f32` rounding.
    ///
    /// ```
    /// # use quadrat::Vec2;
    /// assert_eq!(Vec2::new(3.0, 4.0).normalize(), Vec2::new(0.6, 0.8));
    /// assert_eq!(Vec2::new(0.0, -1e-40).normalize(), Vec2::new(0.0, -1.0));
    /// assert!(Vec2::ZERO.normalize().x.is_nan());
    /// ```
    #[inline]
    #[must_use]
    pub fn normalize(self) -> Vec2 {
        let (x, y, len) = self.length_f64();
        Vec2::new((x / len) as f32, (y / len) as f32)
    }

    /// The vector scaled to length 1, or `None` when that has no answer:
    /// the zero vector, or a coordinate that is infinite or NaN.
    ///
    /// ```
    /// # use quadrat::Vec2;
    /// assert_eq!(Vec2::new(0.0, 2.0).try_normalize(), Some(Vec2::new(0.0, 1.0)));
    /// assert_eq!(Vec2::ZERO.try_normalize(), None);
    /// assert_eq!(Vec2::new(f32::INFINITY, 0.0).try_normalize(), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn try_normalize(self) -> Option<Vec2> {
        let (x, y, len) = self.length_f64();
        // Rejects 0, infinity and NaN (finite coordinates never give an
        // infinite length in f64).
        (len > 0.0 && len.is_finite()).then(|| Vec2::new((x / len) as f32, (y / len) as f32))
    }

    /// The vector scaled to length 1, or [`Vec2::ZERO`] when that has no
    /// answer: the zero vector, or a coordinate that is infinite or NaN.
    ///
    /// ```
    /// # use quadrat::Vec2;
    /// assert_eq!(Vec2::new(-5.0, 0.0).normalize_or_zero(), Vec2::new(-1.0, 0.0));
    /// assert_eq!(Vec2::ZERO.normalize_or_zero(), Vec2::ZERO);
    /// assert_eq!(Vec2::new(f32::NAN, 1.0).normalize_or_zero(), Vec2::ZERO);
    /// ```
    #[inline]
    #[must_use]
    pub fn normalize_or_zero(self) -> Vec2 {
        self.try_normalize().unwrap_or(Vec2::ZERO)
    }

    /// The coordinates and the length in `f64`.
    #[inline]
    fn length_f64(self) -> (f64, f64, f64) {
        let (x, y) = (f64::from(self.x), f64::from(self.y));
        (x, y, (x * x + y * y).sqrt())
    }

    /// The vector turned a quarter turn counterclockwise (with `y` up):
    /// `(-y, x)`. Same length; perpendicular to `self`.
    ///
    /// ```
    /// # use quadrat::Vec2;
    /// let v = Vec2::new(2.0, 1.0);
    /// assert_eq!(v.perp(), Vec2::new(-1.0, 2.0));
    /// assert_eq!(v.dot(v.perp()), 0.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn perp(self) -> Vec2 {
        Vec2::new(-self.y, self.x)
    }

    /// The perpendicular dot product, `self.x * other.y - self.y * other.x`
    /// (the 2D cross product): `self.perp().dot(other)`. Positive when
    /// `other` lies counterclockwise of `self` (less than half a turn), negative
    /// when clockwise, zero when they are parallel; its magnitude is the area
    /// of the parallelogram they span.
    ///
    /// ```
    /// # use quadrat::Vec2;
    /// let (right, up) = (Vec2::new(1.0, 0.0), Vec2::new(0.0, 1.0));
    /// assert_eq!(right.perp_dot(up), 1.0);
    /// assert_eq!(up.perp_dot(right), -1.0);
    /// assert_eq!(right.perp_dot(right * 3.0), 0.0);
    /// assert_eq!(Vec2::new(2.0, 0.0).perp_dot(Vec2::new(1.0, 3.0)), 6.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn perp_dot(self, other: Vec2) -> f32 {
        self.x * other.y - self.y * other.x
    }
}

impl From<[f32; 2]> for Vec2 {
    #[inline]
    fn from([x, y]: [f32; 2]) -> Vec2 {
        Vec2 { x, y }
    }
}

impl From<(f32, f32)> for Vec2 {
    #[inline]
    fn from((x, y): (f32, f32)) -> Vec2 {
        Vec2 { x, y }
    }
}

impl From<Vec2> for [f32; 2] {
    #[inline]
    fn from(v: Vec2) -> [f32; 2] {
        [v.x, v.y]
    }
}

impl From<Vec2> for (f32, f32) {
    #[inline]
    fn from(v: Vec2) -> (f32, f32) {
        (v.x, v.y)
    }
}

impl core::ops::Add for Vec2 {
    type Output = Vec2;
    #[inline]
    fn add(self, rhs: Vec2) -> Vec2 {
        Vec2::new(self.x + rhs.x, self.y + rhs.y)
    }
}

impl core::ops::Sub for Vec2 {
    type Output = Vec2;
    #[inline]
    fn sub(self, rhs: Vec2) -> Vec2 {
        Vec2::new(self.x - rhs.x, self.y - rhs.y)
    }
}

impl core::ops::Mul<f32> for Vec2 {
    type Output = Vec2;
    #[inline]
    fn mul(self, rhs: f32) -> Vec2 {
        Vec2::new(self.x * rhs, self.y * rhs)
    }
}

/// A scalar times a vector, as a vector times a scalar.
///
/// ```
/// # use quadrat::Vec2;
/// assert_eq!(2.0 * Vec2::new(1.0, -3.0), Vec2::new(2.0, -6.0));
/// assert_eq!(2.0 * Vec2::new(1.0, -3.0), Vec2::new(1.0, -3.0) * 2.0);
/// ```
impl core::ops::Mul<Vec2> for f32 {
    type Output = Vec2;
    #[inline]
    fn mul(self, rhs: Vec2) -> Vec2 {
        rhs * self
    }
}

/// Each coordinate divided by a scalar (division by zero follows `f32`:
/// infinite, or NaN for a zero coordinate).
///
/// ```
/// # use quadrat::Vec2;
/// assert_eq!(Vec2::new(3.0, -6.0) / 3.0, Vec2::new(1.0, -2.0));
/// ```
impl core::ops::Div<f32> for Vec2 {
    type Output = Vec2;
    #[inline]
    fn div(self, rhs: f32) -> Vec2 {
        Vec2::new(self.x / rhs, self.y / rhs)
    }
}

/// The opposite vector.
///
/// ```
/// # use quadrat::Vec2;
/// assert_eq!(-Vec2::new(1.0, -2.0), Vec2::new(-1.0, 2.0));
/// ```
impl core::ops::Neg for Vec2 {
    type Output = Vec2;
    #[inline]
    fn neg(self) -> Vec2 {
        Vec2::new(-self.x, -self.y)
    }
}

/// ```
/// # use quadrat::Vec2;
/// let mut p = Vec2::new(1.0, 2.0);
/// p += Vec2::new(0.5, -1.0);
/// assert_eq!(p, Vec2::new(1.5, 1.0));
/// ```
impl core::ops::AddAssign for Vec2 {
    #[inline]
    fn add_assign(&mut self, rhs: Vec2) {
        *self = *self + rhs;
    }
}

/// ```
/// # use quadrat::Vec2;
/// let mut p = Vec2::new(1.0, 2.0);
/// p -= Vec2::new(0.5, -1.0);
/// assert_eq!(p, Vec2::new(0.5, 3.0));
/// ```
impl core::ops::SubAssign for Vec2 {
    #[inline]
    fn sub_assign(&mut self, rhs: Vec2) {
        *self = *self - rhs;
    }
}

/// ```
/// # use quadrat::Vec2;
/// let mut v = Vec2::new(1.0, -2.0);
/// v *= 3.0;
/// assert_eq!(v, Vec2::new(3.0, -6.0));
/// ```
impl core::ops::MulAssign<f32> for Vec2 {
    #[inline]
    fn mul_assign(&mut self, rhs: f32) {
        *self = *self * rhs;
    }
}

/// ```
/// # use quadrat::Vec2;
/// let mut v = Vec2::new(3.0, -6.0);
/// v /= 3.0;
/// assert_eq!(v, Vec2::new(1.0, -2.0));
/// ```
impl core::ops::DivAssign<f32> for Vec2 {
    #[inline]
    fn div_assign(&mut self, rhs: f32) {
        *self = *self / rhs;
    }
}

/// The `f32` nearest to the exact midpoint of `a` and `b` (ties to even),
/// for any finite `a` and `b`.
///
/// In `f64` the sum of two `f32` cannot overflow, and it is exact unless
/// their exponents differ by more than 29; halving it is exact, and the
/// cast rounds once. Where the sum is not exact, the smaller value is below
/// 2⁻²⁹ of the larger, too little to move the midpoint off the `f32`
/// nearest to half the larger one, which is what the cast gives. Halving
/// each in `f32` before adding, as the centre was computed before, rounds
/// once wherever both halves are exact, to the same bits, so the tree's
/// placement did not move for any box whose coordinates are zero or at
/// least `2⁻¹²⁵` in magnitude. Below that, at odd multiples of the smallest
/// subnormal, it rounded twice: the centre of the point box at `3 × 2⁻¹⁴⁹`
/// came out at `4 × 2⁻¹⁴⁹`, outside it, and a cell of zero width there
/// split at a point outside itself, so [`QuadTree::nodes`] showed cells
/// with `min > max`. `(a + b) * 0.5` in `f32` rounds once too, but
/// overflows; choosing between the two forms by the sum cost the bulk build
/// 19% more instructions, where the `f64` form costs 2%.
///
/// [`QuadTree::nodes`]: crate::QuadTree::nodes
#[inline]
pub(crate) fn midpoint(a: f32, b: f32) -> f32 {
    ((f64::from(a) + f64::from(b)) * 0.5) as f32
}

/// An axis-aligned bounding box, closed: it contains its edges.
///
/// A valid box has finite coordinates and `min <= max` on both axes.
/// Zero-size boxes (points and segments) are valid.
/// [`Aabb::new`] does not check; [`Aabb::validate`] does, and the tree checks
/// every box it is given.
///
/// ```
/// use quadrat::Aabb;
/// let a = Aabb::new([0.0, 0.0], [1.0, 1.0]);
/// let b = Aabb::new([1.0, 1.0], [2.0, 2.0]);
/// assert!(a.intersects(&b)); // touching at a corner counts
/// assert!(a.contains_point([1.0, 0.5]));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Aabb {
    /// The corner with the smallest coordinates.
    pub min: Vec2,
    /// The corner with the largest coordinates.
    pub max: Vec2,
}

impl Aabb {
    /// Creates a box from its two corners. `min <= max` is expected on both
    /// axes; see [`Aabb::validate`].
    #[inline]
    #[must_use]
    pub fn new(min: impl Into<Vec2>, max: impl Into<Vec2>) -> Aabb {
        Aabb {
            min: min.into(),
            max: max.into(),
        }
    }

    /// Creates a box from its centre and half extents (half width, half height).
    ///
    /// ```
    /// use quadrat::Aabb;
    /// let b = Aabb::from_center([5.0, 5.0], [1.0, 2.0]);
    /// assert_eq!(b, Aabb::new([4.0, 3.0], [6.0, 7.0]));
    /// ```
    #[inline]
    #[must_use]
    pub fn from_center(center: impl Into<Vec2>, half_extents: impl Into<Vec2>) -> Aabb {
        let c = center.into();
        let h = half_extents.into();
        Aabb {
            min: c - h,
            max: c + h,
        }
    }

    /// The zero-size box at `p`.
    #[inline]
    #[must_use]
    pub fn from_point(p: impl Into<Vec2>) -> Aabb {
        let p = p.into();
        Aabb { min: p, max: p }
    }

    /// The smallest box containing all `points`, or `None` when there are
    /// none. A NaN coordinate of any point is NaN in the box (as in
    /// [`union`](Aabb::union)), so the box is refused where it is used
    /// instead of quietly leaving that point out.
    ///
    /// ```
    /// use quadrat::Aabb;
    /// let b = Aabb::from_points([[1.0, 5.0], [3.0, -1.0]]).unwrap();
    /// assert_eq!(b, Aabb::new([1.0, -1.0], [3.0, 5.0]));
    /// let lost = Aabb::from_points([[1.0, 5.0], [f32::NAN, 9.0], [3.0, -1.0]]).unwrap();
    /// assert!(lost.validate().is_err());
    /// ```
    #[must_use]
    pub fn from_points<P: Into<Vec2>>(points: impl IntoIterator<Item = P>) -> Option<Aabb> {
        let mut it = points.into_iter().map(Into::into);
        let first = it.next()?;
        Some(it.fold(Aabb::from_point(first), |b, p| {
            b.union(&Aabb::from_point(p))
        }))
    }

    /// Width (`max.x - min.x`).
    ///
    /// ```
    /// # use quadrat::Aabb;
    /// let b = Aabb::new([1.0, 2.0], [4.0, 8.0]);
    /// assert_eq!((b.width(), b.height(), b.area()), (3.0, 6.0, 18.0));
    /// assert_eq!(b.size(), quadrat::Vec2::new(3.0, 6.0));
    /// assert_eq!(b.center(), quadrat::Vec2::new(2.5, 5.0));
    /// ```
    #[inline]
    #[must_use]
    pub fn width(&self) -> f32 {
        self.max.x - self.min.x
    }

    /// Height (`max.y - min.y`).
    #[inline]
    #[must_use]
    pub fn height(&self) -> f32 {
        self.max.y - self.min.y
    }

    /// Width and height.
    #[inline]
    #[must_use]
    pub fn size(&self) -> Vec2 {
        self.max - self.min
    }

    /// The centre: on each axis the `f32` nearest to the exact midpoint of
    /// `min` and `max` (ties to even), so it lies inside the box, without
    /// overflow for any finite box, down to the subnormals.
    ///
    /// ```
    /// use quadrat::{Aabb, Vec2};
    /// assert_eq!(Aabb::new([1.0, 2.0], [3.0, 6.0]).center(), Vec2::new(2.0, 4.0));
    /// let m = f32::MAX;
    /// assert_eq!(Aabb::new([m, -m], [m, m]).center(), Vec2::new(m, 0.0));
    /// let tiny = f32::from_bits(3); // 3 × the smallest subnormal
    /// assert_eq!(Aabb::from_point([tiny, -tiny]).center(), Vec2::new(tiny, -tiny));
    /// ```
    #[inline]
    #[must_use]
    pub fn center(&self) -> Vec2 {
        Vec2::new(
            midpoint(self.min.x, self.max.x),
            midpoint(self.min.y, self.max.y),
        )
    }

    /// Area (`width * height`).
    #[inline]
    #[must_use]
    pub fn area(&self) -> f32 {
        self.width() * self.height()
    }

    /// `true` when the two closed boxes share at least one point.
    ///
    /// Boxes that touch at an edge or a corner intersect. Any comparison with
    /// a NaN coordinate is false, so a box with a NaN intersects nothing.
    #[inline]
    #[must_use]
    pub fn intersects(&self, other: &Aabb) -> bool {
        self.min.x <= other.max.x
            && other.min.x <= self.max.x
            && self.min.y <= other.max.y
            && other.min.y <= self.max.y
    }

    /// [`intersects`](Aabb::intersects) without its short-circuits: all
    /// four comparisons are made, so that a caller can use the answer
    /// without a branch (to advance past a hit in a buffer, say).
    #[inline(always)]
    pub(crate) fn touches(&self, other: &Aabb) -> bool {
        (self.min.x <= other.max.x)
            & (other.min.x <= self.max.x)
            & (self.min.y <= other.max.y)
            & (other.min.y <= self.max.y)
    }

    /// `true` when `other` lies entirely inside `self` (edges included).
    #[inline]
    #[must_use]
    pub fn contains(&self, other: &Aabb) -> bool {
        self.min.x <= other.min.x
            && self.min.y <= other.min.y
            && other.max.x <= self.max.x
            && other.max.y <= self.max.y
    }

    /// `true` when `p` lies inside the box or on its edge.
    #[inline]
    #[must_use]
    pub fn contains_point(&self, p: impl Into<Vec2>) -> bool {
        let p = p.into();
        self.min.x <= p.x && p.x <= self.max.x && self.min.y <= p.y && p.y <= self.max.y
    }

    /// The smallest box containing both boxes. A NaN coordinate of either
    /// box is NaN in the union, which [`validate`](Aabb::validate) then
    /// refuses, rather than dropped.
    ///
    /// ```
    /// # use quadrat::Aabb;
    /// let a = Aabb::new([0.0, 0.0], [1.0, 1.0]);
    /// let b = Aabb::new([2.0, -1.0], [3.0, 0.5]);
    /// assert_eq!(a.union(&b), Aabb::new([0.0, -1.0], [3.0, 1.0]));
    /// assert!(a.union(&b).contains(&a));
    /// let lost = Aabb::new([f32::NAN, 0.0], [1.0, 1.0]);
    /// assert!(a.union(&lost).validate().is_err());
    /// assert!(lost.union(&a).validate().is_err());
    /// ```
    #[inline]
    #[must_use]
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb {
            min: Vec2::new(
                lower(self.min.x, other.min.x),
                lower(self.min.y, other.min.y),
            ),
            max: Vec2::new(
                higher(self.max.x, other.max.x),
                higher(self.max.y, other.max.y),
            ),
        }
    }

    /// [`union`](Aabb::union) of boxes known to hold no NaN (the tree's
    /// and the world's, all validated, and the empty box's infinities), by
    /// `min` and `max`: what the walks compute for every child they
    /// consider, where the NaN checks of `union` cost ray casts a fifth
    /// more instructions.
    #[inline]
    #[must_use]
    pub(crate) fn join(&self, other: &Aabb) -> Aabb {
        // Plain comparisons: with no NaN to pass over, each is one `minss`
        // or `maxss`, where `f32::min` adds NaN checks. With those, the
        // tight bounds of every finished run made a rebuild of 300k uniform
        // boxes run 1.05× the instructions (callgrind).
        let low = |a: f32, b: f32| if a < b { a } else { b };
        let high = |a: f32, b: f32| if a > b { a } else { b };
        Aabb {
            min: Vec2::new(low(self.min.x, other.min.x), low(self.min.y, other.min.y)),
            max: Vec2::new(high(self.max.x, other.max.x), high(self.max.y, other.max.y)),
        }
    }

    /// The box grown by `margin` on every side (shrunk when negative).
    ///
    /// ```
    /// # use quadrat::Aabb;
    /// let b = Aabb::new([0.0, 0.0], [1.0, 1.0]);
    /// assert_eq!(b.expand(1.0), Aabb::new([-1.0, -1.0], [2.0, 2.0]));
    /// assert_eq!(b.translate([1.0, 0.0]), Aabb::new([1.0, 0.0], [2.0, 1.0]));
    /// ```
    #[inline]
    #[must_use]
    pub fn expand(&self, margin: f32) -> Aabb {
        Aabb {
            min: self.min - Vec2::splat(margin),
            max: self.max + Vec2::splat(margin),
        }
    }

    /// The box moved by `offset`.
    #[inline]
    #[must_use]
    pub fn translate(&self, offset: impl Into<Vec2>) -> Aabb {
        let o = offset.into();
        Aabb {
            min: self.min + o,
            max: self.max + o,
        }
    }

    /// The point of the box closest to `p` (`p` itself when inside). A NaN
    /// coordinate of `p` stays NaN.
    ///
    /// ```
    /// # use quadrat::{Aabb, Vec2};
    /// let b = Aabb::new([0.0, 0.0], [1.0, 1.0]);
    /// assert_eq!(b.closest_point([3.0, 0.5]), Vec2::new(1.0, 0.5));
    /// assert!(b.closest_point([f32::NAN, 0.5]).x.is_nan());
    /// assert_eq!(b.distance_to_point([4.0, 5.0]), 5.0);
    /// assert_eq!(b.distance_squared_to_point([0.5, 0.5]), 0.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn closest_point(&self, p: impl Into<Vec2>) -> Vec2 {
        let p = p.into();
        // Comparisons, not `max` and `min`, which would drop a NaN.
        let clamp = |v: f32, lo: f32, hi: f32| {
            let v = if v < lo { lo } else { v };
            if v > hi { hi } else { v }
        };
        Vec2::new(
            clamp(p.x, self.min.x, self.max.x),
            clamp(p.y, self.min.y, self.max.y),
        )
    }

    /// Squared Euclidean distance from `p` to the box (0 inside or on the
    /// edge), in `f64`; NaN when a coordinate of `p` is NaN.
    ///
    /// Computed in `f64`, which neither overflows nor underflows for any
    /// finite `f32` coordinates: boxes `f32::MAX` apart and boxes `1e-45`
    /// apart both get their true distance (to `f64` rounding), where an
    /// `f32` square would give infinity or 0.
    ///
    /// ```
    /// use quadrat::Aabb;
    /// let b = Aabb::from_point([1e-30, 0.0]);
    /// assert_eq!(b.distance_squared_to_point([0.0, 0.0]), 1e-30f32 as f64 * 1e-30f32 as f64);
    /// assert!(Aabb::from_point([f32::MAX, 0.0]).distance_squared_to_point([-f32::MAX, 0.0]).is_finite());
    /// assert!(b.distance_squared_to_point([f32::NAN, 0.0]).is_nan());
    /// ```
    #[inline]
    #[must_use]
    pub fn distance_squared_to_point(&self, p: impl Into<Vec2>) -> f64 {
        let (dx, dy) = self.gaps_to(p.into());
        dx * dx + dy * dy
    }

    /// Euclidean distance from `p` to the box (0 inside or on the edge): the
    /// `f64` distance rounded to the nearest `f32`, so exact to the last bit
    /// over the whole finite `f32` range, and `f32::INFINITY` only for
    /// distances beyond `f32::MAX`. NaN when a coordinate of `p` is NaN.
    ///
    /// ```
    /// use quadrat::Aabb;
    /// let b = Aabb::new([0.0, 0.0], [1.0, 1.0]);
    /// assert_eq!(b.distance_to_point([4.0, 5.0]), 5.0);
    /// // Not 0: a NaN coordinate is nowhere, not inside the box's extent.
    /// assert!(b.distance_to_point([f32::NAN, 0.5]).is_nan());
    /// ```
    #[inline]
    #[must_use]
    pub fn distance_to_point(&self, p: impl Into<Vec2>) -> f32 {
        let (dx, dy) = self.gaps_to(p.into());
        distance_from_gaps(dx, dy)
    }

    /// The gaps from `p` to the box along each axis, in `f64` (0 where `p`
    /// is within the box's extent on that axis, NaN where `p` is NaN).
    #[inline]
    pub(crate) fn gaps_to(&self, p: Vec2) -> (f64, f64) {
        let gap = |lo: f32, hi: f32, v: f32| {
            let (lo, hi, v) = (f64::from(lo), f64::from(hi), f64::from(v));
            // Comparisons, not `max`, which drops a NaN: both sides are NaN
            // exactly when `v` is, and the gap is NaN then, not 0. (Each
            // compiles to one `maxsd`.)
            let (below, above) = (lo - v, v - hi);
            let d = if below > above { below } else { above };
            if d < 0.0 { 0.0 } else { d }
        };
        (
            gap(self.min.x, self.max.x, p.x),
            gap(self.min.y, self.max.y, p.y),
        )
    }

    /// `true` when the box is valid: finite coordinates and `min <= max`.
    #[inline]
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.validate().is_ok()
    }

    /// Checks that the box is valid, saying exactly what is wrong if it is not.
    ///
    /// ```
    /// use quadrat::{Aabb, Error};
    /// assert!(Aabb::new([0.0, 0.0], [1.0, 1.0]).validate().is_ok());
    /// let err = Aabb::new([0.0, f32::NAN], [1.0, 1.0]).validate().unwrap_err();
    /// assert_eq!(err.to_string(), "min.y is NaN");
    /// let err = Aabb::new([2.0, 0.0], [1.0, 1.0]).validate().unwrap_err();
    /// assert_eq!(err.to_string(), "min.x (2) is greater than max.x (1)");
    /// ```
    #[inline]
    pub fn validate(&self) -> Result<(), Error> {
        // Every test made, joined with `&`, and one branch: the magnitudes
        // are compared with `f32::MAX`, which NaN and the infinities fail.
        // Against the tests joined with `&&`, `insert_many` of 300k boxes
        // ran 14 fewer instructions a box (callgrind). A box refused here
        // is looked at again, test by test, by `explain_invalid`.
        let v = [self.min.x, self.min.y, self.max.x, self.max.y];
        let finite = v.iter().fold(true, |ok, x| ok & (x.abs() <= f32::MAX));
        if finite & (self.min.x <= self.max.x) & (self.min.y <= self.max.y) {
            return Ok(());
        }
        explain_invalid(self.min.x, self.min.y, self.max.x, self.max.y)
    }
}

/// The slow path of [`Aabb::validate`]: which field of the box
/// `[min_x, min_y] .. [max_x, max_y]` is wrong. It takes the four
/// coordinates, not the box, so that the box need not be written to memory
/// for its address before the test (see `validate`).
#[cold]
fn explain_invalid(min_x: f32, min_y: f32, max_x: f32, max_y: f32) -> Result<(), Error> {
    let fields = [
        ("min.x", min_x),
        ("min.y", min_y),
        ("max.x", max_x),
        ("max.y", max_y),
    ];
    for (field, value) in fields {
        if !value.is_finite() {
            return Err(Error::NonFinite { field, value });
        }
    }
    if min_x > max_x {
        return Err(Error::Inverted {
            axis: 'x',
            min: min_x,
            max: max_x,
        });
    }
    if min_y > max_y {
        return Err(Error::Inverted {
            axis: 'y',
            min: min_y,
            max: max_y,
        });
    }
    Ok(())
}

/// The smaller of `a` and `b`, or NaN when either is NaN (`f32::min`
/// returns the other one then, which would let a NaN box vanish into a
/// union).
#[inline]
fn lower(a: f32, b: f32) -> f32 {
    if a < b || a.is_nan() { a } else { b }
}

/// The larger of `a` and `b`, or NaN when either is NaN (see [`lower`]).
#[inline]
fn higher(a: f32, b: f32) -> f32 {
    if a > b || a.is_nan() { a } else { b }
}

/// A value and an index packed so that comparing two as integers orders
/// them by value (as `f32::total_cmp` does), then by index: the value's
/// bits, mapped to an unsigned integer in that order, fill the high half,
/// the index the low half. `nearest` keeps its best `k` by these (index =
/// slot, so ties go by key) and sorts a node's children by them, and the
/// run sort orders short runs by `min.x` with them (index = place in the
/// run, so equal `min.x` keep their order): both without a comparison
/// function that the compiler may not inline (ARCHITECTURE.md gives the
/// measured gains).
#[inline]
pub(crate) fn pack(value: f32, index: u32) -> u64 {
    let bits = value.to_bits();
    // Negative values (sign bit set) reverse; the rest move above them.
    let ordered = if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    };
    u64::from(ordered) << 32 | u64::from(index)
}

/// The value and index of a [`pack`]ed pair.
#[inline]
pub(crate) fn unpack(packed: u64) -> (f32, u32) {
    let ordered = (packed >> 32) as u32;
    let bits = if ordered >> 31 == 1 {
        ordered & !(1 << 31)
    } else {
        !ordered
    };
    (f32::from_bits(bits), packed as u32)
}

/// The Euclidean length of the gaps `(dx, dy)`, rounded to `f32`. Monotone
/// in each gap, which the searches' cut-offs rely on: a box whose gap along
/// one axis alone is already too far cannot be nearer.
#[inline]
pub(crate) fn distance_from_gaps(dx: f64, dy: f64) -> f32 {
    (dx * dx + dy * dy).sqrt() as f32
}

impl From<[f32; 4]> for Aabb {
    /// `[min_x, min_y, max_x, max_y]`.
    #[inline]
    fn from([a, b, c, d]: [f32; 4]) -> Aabb {
        Aabb::new([a, b], [c, d])
    }
}

impl From<Aabb> for [f32; 4] {
    /// `[min_x, min_y, max_x, max_y]`.
    #[inline]
    fn from(b: Aabb) -> [f32; 4] {
        [b.min.x, b.min.y, b.max.x, b.max.y]
    }
}

/// A closed disc: its centre and radius.
///
/// ```
/// use quadrat::{Aabb, Circle};
/// let c = Circle::new([0.0, 0.0], 1.0);
/// assert!(c.contains_point([1.0, 0.0])); // on the rim counts
/// assert!(c.intersects_aabb(&Aabb::new([1.0, -5.0], [2.0, 5.0])));
/// assert_eq!(c.aabb(), Aabb::new([-1.0, -1.0], [1.0, 1.0]));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Circle {
    /// Centre of the disc.
    pub center: Vec2,
    /// Radius; valid radii are finite and not negative.
    pub radius: f32,
}

impl Circle {
    /// Creates a circle.
    #[inline]
    #[must_use]
    pub fn new(center: impl Into<Vec2>, radius: f32) -> Circle {
        Circle {
            center: center.into(),
            radius,
        }
    }

    /// The circle's bounding box.
    #[inline]
    #[must_use]
    pub fn aabb(&self) -> Aabb {
        Aabb::from_center(self.center, Vec2::splat(self.radius))
    }

    /// `true` when `p` is inside the disc or on its rim (never for a NaN
    /// coordinate of `p` or of the centre).
    #[inline]
    #[must_use]
    pub fn contains_point(&self, p: impl Into<Vec2>) -> bool {
        self.intersects_aabb(&Aabb::from_point(p))
    }

    /// `true` when the disc and the closed box share a point.
    ///
    /// Decided in `f64`, so that no radius or distance overflows or
    /// underflows over the whole finite `f32` range. A circle with a NaN
    /// centre coordinate, or a negative or NaN radius, intersects nothing.
    ///
    /// ```
    /// use quadrat::{Aabb, Circle};
    /// let huge = Circle::new([0.0, 0.0], 2e19);
    /// assert!(!huge.intersects_aabb(&Aabb::from_point([1e30, 0.0])));
    /// let tiny = Circle::new([0.0, 0.0], 1e-30);
    /// assert!(tiny.intersects_aabb(&Aabb::from_point([0.0, 1e-30])));
    /// let lost = Circle::new([f32::NAN, 0.0], 5.0);
    /// assert!(!lost.intersects_aabb(&Aabb::new([-1.0, -1.0], [1.0, 1.0])));
    /// ```
    #[inline]
    #[must_use]
    pub fn intersects_aabb(&self, b: &Aabb) -> bool {
        let r = f64::from(self.radius);
        r >= 0.0 && b.distance_squared_to_point(self.center) <= r * r
    }

    /// `true` when the two discs share a point (decided in `f64`, like
    /// [`Circle::intersects_aabb`]; a circle with a NaN centre coordinate
    /// or a negative or NaN radius meets none).
    #[inline]
    #[must_use]
    pub fn intersects_circle(&self, other: &Circle) -> bool {
        let r = f64::from(self.radius) + f64::from(other.radius);
        self.radius >= 0.0
            && other.radius >= 0.0
            && Aabb::from_point(other.center).distance_squared_to_point(self.center) <= r * r
    }

    /// Checks the circle: finite centre, finite radius that is not negative.
    ///
    /// ```
    /// use quadrat::Circle;
    /// let err = Circle::new([0.0, 0.0], -1.0).validate().unwrap_err();
    /// assert_eq!(err.to_string(), "radius (-1) is negative");
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        for (field, value) in [
            ("center.x", self.center.x),
            ("center.y", self.center.y),
            ("radius", self.radius),
        ] {
            if !value.is_finite() {
                return Err(Error::NonFinite { field, value });
            }
        }
        if self.radius < 0.0 {
            return Err(Error::Negative {
                field: "radius",
                value: self.radius,
            });
        }
        Ok(())
    }
}

/// A ray: an origin and a direction, which need not be of unit length.
///
/// Distances along a ray are Euclidean distances from its origin, whatever
/// the length of `direction`.
///
/// ```
/// use quadrat::Ray;
/// let r = Ray::new([0.0, 0.0], [3.0, 4.0]);
/// assert_eq!(r.at(5.0), quadrat::Vec2::new(3.0, 4.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Ray {
    /// Where the ray starts.
    pub origin: Vec2,
    /// Which way it goes; any non-zero length.
    pub direction: Vec2,
}

impl Ray {
    /// Creates a ray.
    #[inline]
    #[must_use]
    pub fn new(origin: impl Into<Vec2>, direction: impl Into<Vec2>) -> Ray {
        Ray {
            origin: origin.into(),
            direction: direction.into(),
        }
    }

    /// The point at Euclidean distance `dist` from the origin along the ray.
    #[inline]
    #[must_use]
    pub fn at(&self, dist: f32) -> Vec2 {
        let (dx, dy) = (f64::from(self.direction.x), f64::from(self.direction.y));
        let s = f64::from(dist) / (dx * dx + dy * dy).sqrt();
        Vec2::new(
            (f64::from(self.origin.x) + dx * s) as f32,
            (f64::from(self.origin.y) + dy * s) as f32,
        )
    }

    /// Checks the ray: finite origin and direction, direction not zero.
    ///
    /// ```
    /// use quadrat::Ray;
    /// let err = Ray::new([0.0, 0.0], [0.0, 0.0]).validate().unwrap_err();
    /// assert_eq!(err.to_string(), "ray direction is zero");
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        for (field, value) in [
            ("origin.x", self.origin.x),
            ("origin.y", self.origin.y),
            ("direction.x", self.direction.x),
            ("direction.y", self.direction.y),
        ] {
            if !value.is_finite() {
                return Err(Error::NonFinite { field, value });
            }
        }
        if self.direction.x == 0.0 && self.direction.y == 0.0 {
            return Err(Error::ZeroDirection);
        }
        Ok(())
    }

    /// Euclidean distance from the origin to where the ray enters `b`
    /// (0 when the origin is inside), if it does so within `max_dist`.
    ///
    /// ```
    /// use quadrat::{Aabb, Ray};
    /// let r = Ray::new([0.0, 0.5], [2.0, 0.0]);
    /// assert_eq!(r.intersect_aabb(&Aabb::new([3.0, 0.0], [4.0, 1.0]), 10.0), Some(3.0));
    /// assert_eq!(r.intersect_aabb(&Aabb::new([3.0, 0.0], [4.0, 1.0]), 2.0), None);
    /// ```
    ///
    /// Computed in `f64`: any finite non-zero direction works, subnormal or
    /// as long as `f32::MAX` in both components, and a box farther from the
    /// origin than `f32::MAX` is hit at `f32::INFINITY` (so only when
    /// `max_dist` is infinite). An invalid ray or a NaN or negative
    /// `max_dist` hits nothing, and nothing hits a box with a NaN
    /// coordinate or an inverted one (as no box intersects them).
    ///
    /// ```
    /// use quadrat::{Aabb, Ray};
    /// let r = Ray::new([0.0, 0.0], [1.0, 0.0]);
    /// assert_eq!(r.intersect_aabb(&Aabb::new([f32::NAN, -1.0], [5.0, 1.0]), 10.0), None);
    /// assert_eq!(r.intersect_aabb(&Aabb::new([5.0, -1.0], [2.0, 1.0]), 10.0), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn intersect_aabb(&self, b: &Aabb, max_dist: f32) -> Option<f32> {
        RayCast::new(self, max_dist)?.enter(b).map(|t| t as f32)
    }
}

/// A ray prepared for many box tests: origin, unit direction and reach in
/// `f64`, where no finite `f32` input overflows or underflows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayCast {
    origin: [f64; 2],
    /// The unit direction's reciprocal per axis; unused where `axis_zero`.
    inv: [f64; 2],
    axis_zero: [bool; 2],
    max: f64,
}

impl RayCast {
    /// `None` for an invalid ray or a NaN or negative `max_dist`.
    #[inline]
    pub(crate) fn new(ray: &Ray, max_dist: f32) -> Option<RayCast> {
        ray.validate().ok()?;
        if max_dist.is_nan() || max_dist < 0.0 {
            return None;
        }
        let (dx, dy) = (f64::from(ray.direction.x), f64::from(ray.direction.y));
        let len = (dx * dx + dy * dy).sqrt();
        let (ux, uy) = (dx / len, dy / len);
        Some(RayCast {
            origin: [f64::from(ray.origin.x), f64::from(ray.origin.y)],
            inv: [1.0 / ux, 1.0 / uy],
            axis_zero: [ux == 0.0, uy == 0.0],
            max: f64::from(max_dist),
        })
    }

    /// The distance at which the ray enters `b` (0 when the origin is inside
    /// or on it), if it does so within reach. Monotone in the box: a box
    /// containing `b` is never entered later, which lets bounds prune.
    /// `None` for a box with a NaN coordinate or an inverted one, the empty
    /// box among them.
    #[inline]
    pub(crate) fn enter(&self, b: &Aabb) -> Option<f64> {
        // The slab test would take a NaN side for no side at all, and an
        // inverted box for the box between its sides.
        if !(b.min.x <= b.max.x && b.min.y <= b.max.y) {
            return None;
        }
        let mut t0 = 0.0f64;
        let mut t1 = self.max;
        let bounds = [(b.min.x, b.max.x), (b.min.y, b.max.y)];
        for (axis, (lo, hi)) in bounds.into_iter().enumerate() {
            let o = self.origin[axis];
            let (lo, hi) = (f64::from(lo), f64::from(hi));
            if self.axis_zero[axis] {
                if o < lo || o > hi {
                    return None;
                }
            } else {
                let inv = self.inv[axis];
                let (mut a, mut c) = ((lo - o) * inv, (hi - o) * inv);
                if a > c {
                    core::mem::swap(&mut a, &mut c);
                }
                // Comparisons, not `max`/`min`: `t0` starts at +0.0 and a
                // -0.0 (a slab side through the origin, met going
                // backwards) must not replace it, since distances are
                // ordered by `total_cmp`; which zero `max` returns is
                // unspecified.
                if a > t0 {
                    t0 = a;
                }
                if c < t1 {
                    t1 = c;
                }
                if t0 > t1 {
                    return None;
                }
            }
        }
        Some(t0)
    }
}

#[cfg(test)]
mod tests {
    use super::{Vec2, pack, unpack};

    /// Every kind of `f32`, including both zeros, both infinities,
    /// subnormals and NaNs of either sign.
    const VALUES: [f32; 14] = [
        f32::NEG_INFINITY,
        -f32::MAX,
        -1.5,
        -f32::MIN_POSITIVE,
        -1e-45,
        -0.0,
        0.0,
        1e-45,
        f32::MIN_POSITIVE,
        1.0,
        1.0000001,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
    ];

    #[test]
    fn packed_order_is_total_cmp_then_index() {
        let mut values = VALUES.to_vec();
        values.push(-f32::NAN);
        for &a in &values {
            for &b in &values {
                for (i, j) in [(0, 0), (0, 1), (1, 0), (7, u32::MAX)] {
                    let want = a.total_cmp(&b).then(i.cmp(&j));
                    assert_eq!(
                        pack(a, i).cmp(&pack(b, j)),
                        want,
                        "{a:?}/{i} against {b:?}/{j}"
                    );
                }
            }
            for i in [0, 9, 1 << 31, u32::MAX] {
                let (d, j) = unpack(pack(a, i));
                assert_eq!((d.to_bits(), j), (a.to_bits(), i));
            }
        }
    }

    /// `midpoint` is the `f32` nearest to the exact midpoint, so it lies
    /// between its arguments, and it gives the old form's bits wherever that
    /// form halved both values exactly. Checked on both zeros, subnormals of
    /// a few units of either sign, the ends of the range and random bit
    /// patterns of every exponent. Where the sum is exact in `f64` (the two
    /// values' exponents differing by less than 29), neither `f32` next to
    /// the answer is nearer to the exact midpoint.
    #[test]
    fn midpoint_is_the_nearest_f32_to_the_exact_one() {
        let mut values: Vec<f32> = VALUES.iter().copied().filter(|v| v.is_finite()).collect();
        for units in 1..=9u32 {
            values.extend([f32::from_bits(units), -f32::from_bits(units)]);
            values.push(f32::from_bits(f32::MIN_POSITIVE.to_bits() + units));
        }
        values.extend([f32::MAX, -f32::MAX, f32::from_bits(f32::MAX.to_bits() - 1)]);
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        for _ in 0..600 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = f32::from_bits(state as u32);
            if v.is_finite() {
                values.push(v);
            }
        }
        let mut differs = 0;
        for &a in &values {
            for &b in &values {
                let m = super::midpoint(a, b);
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                assert!(lo <= m && m <= hi, "{a:e} {b:e} -> {m:e}");
                assert_eq!(m.to_bits(), super::midpoint(b, a).to_bits(), "{a:e} {b:e}");
                let (x, y) = (f64::from(a), f64::from(b));
                let sum = x + y;
                // Knuth's TwoSum: the rounding error of `x + y`, exactly.
                let back = sum - x;
                if (x - (sum - back)) + (y - back) == 0.0 {
                    // The exact midpoint; no neighbour of `m` is nearer to
                    // it, and a tie goes to the even one. The distances are
                    // exact: the values are close, or multiples of 2⁻¹⁵⁰.
                    let exact = sum * 0.5;
                    let off = (f64::from(m) - exact).abs();
                    for n in [m.next_down(), m.next_up()] {
                        let n_off = (f64::from(n) - exact).abs();
                        assert!(
                            n_off > off || (n_off == off && m.to_bits().is_multiple_of(2)),
                            "{a:e} {b:e}: {m:e}, but {n:e} is as near"
                        );
                    }
                }
                let halves_exact = (a * 0.5) * 2.0 == a && (b * 0.5) * 2.0 == b;
                let old = a * 0.5 + b * 0.5;
                if halves_exact {
                    assert_eq!(m.to_bits(), old.to_bits(), "{a:e} {b:e}");
                } else if m.to_bits() != old.to_bits() {
                    differs += 1;
                }
            }
        }
        // The values above include pairs the old form got wrong.
        assert!(differs > 0);
    }

    /// Unit length within a few ulps.
    fn is_unit(v: Vec2) -> bool {
        (f64::from(v.x).hypot(f64::from(v.y)) - 1.0).abs() < 4.0 * f64::from(f32::EPSILON)
    }

    #[test]
    fn normalize_gives_unit_vectors_over_the_whole_range() {
        for v in [
            Vec2::new(3.0, 4.0),
            Vec2::new(-1.0, 0.0),
            Vec2::new(0.0, 7.5),
            Vec2::new(1e-40, -3e-40),
            Vec2::new(f32::MIN_POSITIVE, 0.0),
            Vec2::new(1e-45, 1e-45),
            Vec2::new(1e30, 1e30),
            Vec2::new(f32::MAX, f32::MAX),
            Vec2::new(-f32::MAX, 1.0),
        ] {
            let n = v.normalize();
            assert!(is_unit(n), "{v:?} -> {n:?}");
            // Same direction: parallel and pointing the same way.
            assert_eq!(n.x.signum(), v.x.signum(), "{v:?}");
            assert_eq!(n.y.signum(), v.y.signum(), "{v:?}");
            assert_eq!(v.try_normalize(), Some(n));
            assert_eq!(v.normalize_or_zero(), n);
        }
    }

    #[test]
    fn normalize_without_an_answer() {
        for v in [
            Vec2::ZERO,
            Vec2::new(-0.0, 0.0),
            Vec2::new(f32::INFINITY, 0.0),
            Vec2::new(f32::INFINITY, f32::NEG_INFINITY),
            Vec2::new(1.0, f32::NAN),
            Vec2::new(f32::NAN, f32::INFINITY),
        ] {
            let n = v.normalize();
            assert!(n.x.is_nan() || n.y.is_nan(), "{v:?} -> {n:?}");
            assert_eq!(v.try_normalize(), None, "{v:?}");
            assert_eq!(v.normalize_or_zero(), Vec2::ZERO, "{v:?}");
        }
        // The zero vector's normalize is NaN in both coordinates, as glam's.
        let z = Vec2::ZERO.normalize();
        assert!(z.x.is_nan() && z.y.is_nan());
    }

    #[test]
    fn perp_and_perp_dot() {
        let vs = [
            Vec2::new(1.0, 0.0),
            Vec2::new(0.0, 1.0),
            Vec2::new(2.0, -3.0),
            Vec2::new(-0.5, -4.0),
        ];
        for a in vs {
            assert_eq!(a.perp().length_squared(), a.length_squared());
            assert_eq!(a.dot(a.perp()), 0.0);
            assert_eq!(a.perp().perp(), -a);
            assert_eq!(a.perp_dot(a), 0.0);
            for b in vs {
                assert_eq!(a.perp_dot(b), a.perp().dot(b));
                assert_eq!(a.perp_dot(b), -b.perp_dot(a));
            }
        }
        // Counterclockwise is positive.
        assert_eq!(Vec2::new(1.0, 0.0).perp(), Vec2::new(0.0, 1.0));
        assert!(Vec2::new(1.0, 0.0).perp_dot(Vec2::new(1.0, 1.0)) > 0.0);
        assert!(Vec2::new(1.0, 0.0).perp_dot(Vec2::new(1.0, -1.0)) < 0.0);
    }

    #[test]
    fn scalar_operators() {
        let v = Vec2::new(1.5, -2.0);
        assert_eq!(2.0 * v, v * 2.0);
        assert_eq!(2.0 * v, Vec2::new(3.0, -4.0));
        assert_eq!(v / 2.0, Vec2::new(0.75, -1.0));
        assert_eq!(v / 0.5, v * 2.0);
        let d = v / 0.0;
        assert_eq!((d.x, d.y), (f32::INFINITY, f32::NEG_INFINITY));
        assert!((Vec2::ZERO / 0.0).x.is_nan());
        assert_eq!(-v, Vec2::new(-1.5, 2.0));
        assert_eq!(-(-v), v);

        let mut m = v;
        m *= 4.0;
        assert_eq!(m, v * 4.0);
        m /= 4.0;
        assert_eq!(m, v);
        m += Vec2::new(0.5, 2.0);
        assert_eq!(m, Vec2::new(2.0, 0.0));
        m -= Vec2::new(2.0, 1.0);
        assert_eq!(m, Vec2::new(0.0, -1.0));
    }
}
