//! Exact shapes: [`Shape`], placed at a position, with point queries, ray
//! casts and the narrow phase ([`Shape::intersects`], [`Shape::contact`]).

use crate::error::Error;
use crate::geom::{Aabb, Ray, Vec2};
use crate::narrow::{self, Core, Segment};

/// An exact convex shape in local coordinates, centred on the origin.
///
/// A shape has no position of its own: a body is a shape and a position
/// (`(Shape, Vec2)`), and every method takes the position, so one shape can
/// describe many bodies.
///
/// Shapes are **closed**, like [`Aabb`]: a point on the boundary is inside,
/// and shapes that only touch intersect, with a contact of depth 0.
///
/// A valid shape has finite sizes and no negative radius or half extent
/// (see [`Shape::validate`]). Zero sizes are valid: a circle of radius 0, a
/// box with zero half extents and a capsule with a zero segment and zero
/// radius are all the single point at the position, and touch what a
/// [`Shape::Point`] there touches; a box of zero width is a segment.
///
/// ```
/// use quadrat::{Aabb, Shape, Vec2};
/// let ball = Shape::Circle { radius: 1.0 };
/// let wall = Shape::Aabb { half_extents: Vec2::new(0.5, 10.0) };
/// assert_eq!(ball.aabb([0.0, 0.0]), Aabb::new([-1.0, -1.0], [1.0, 1.0]));
///
/// // The ball at x = 0 overlaps the wall whose left face is at x = 0.75.
/// let c = ball.contact([0.0, 0.0], &wall, [1.25, 0.0]).unwrap();
/// assert_eq!((c.normal, c.depth), (Vec2::new(1.0, 0.0), 0.25));
/// // Pushed back by the depth, it touches: still a contact, of depth 0.
/// let c = ball.contact([-0.25, 0.0], &wall, [1.25, 0.0]).unwrap();
/// assert_eq!(c.depth, 0.0);
/// assert!(!ball.intersects([-0.5, 0.0], &wall, [1.25, 0.0]));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Shape {
    /// A closed disc centred on the position.
    Circle {
        /// Radius; finite and not negative.
        radius: f32,
    },
    /// An axis-aligned box centred on the position.
    Aabb {
        /// Half width and half height; finite and not negative.
        half_extents: Vec2,
    },
    /// The position itself.
    Point,
    /// A capsule: the segment from `-half_segment` to `+half_segment`
    /// (relative to the position) grown by `radius` in every direction.
    ///
    /// The segment may point any way. With a zero radius the capsule is the
    /// segment itself; with a zero segment it is a circle.
    /// [`Shape::capsule_between`] builds one from the segment's end points.
    Capsule {
        /// Half of the segment; finite, any direction, possibly zero.
        half_segment: Vec2,
        /// Radius; finite and not negative.
        radius: f32,
    },
}

/// Where two shapes overlap, from [`Shape::contact`].
///
/// ```
/// use quadrat::{Contact, Shape, Vec2};
/// let ball = Shape::Circle { radius: 2.0 };
/// let c: Contact = ball.contact([0.0, 0.0], &ball, [3.0, 0.0]).unwrap();
/// assert_eq!(c.normal, Vec2::new(1.0, 0.0)); // from the first towards the second
/// assert_eq!(c.depth, 1.0);
/// assert_eq!(c.point, Vec2::new(1.5, 0.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Contact {
    /// Unit vector from the first shape towards the second: moving the
    /// second shape by `normal * depth` (or the first by `-normal * depth`)
    /// leaves them just touching. It is a direction of least penetration.
    pub normal: Vec2,
    /// How far the shapes overlap along `normal`; 0 when they only touch,
    /// never negative.
    pub depth: f32,
    /// A point inside both shapes, in the middle of their overlap: the
    /// touching point when `depth` is 0.
    pub point: Vec2,
}

/// Where a ray enters a shape, from [`Shape::raycast`].
///
/// ```
/// use quadrat::{Ray, RayHit, Shape, Vec2};
/// let ball = Shape::Circle { radius: 1.0 };
/// let hit: RayHit = ball.raycast([5.0, 0.0], Ray::new([0.0, 0.0], [2.0, 0.0]), 100.0).unwrap();
/// assert_eq!(hit, RayHit { dist: 4.0, normal: Vec2::new(-1.0, 0.0) });
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RayHit {
    /// Euclidean distance from the ray's origin to the entry point; 0 when
    /// the origin is inside the shape.
    pub dist: f32,
    /// Unit outward normal of the shape at the entry point. When the origin
    /// is inside the shape, it is the reversed unit direction of the ray.
    pub normal: Vec2,
}

impl Shape {
    /// The capsule around the segment from `a` to `b`, and its position
    /// (the middle of the segment).
    ///
    /// ```
    /// use quadrat::{Shape, Vec2};
    /// let (shape, pos) = Shape::capsule_between([0.0, 0.0], [4.0, 0.0], 1.0);
    /// assert_eq!(pos, Vec2::new(2.0, 0.0));
    /// assert_eq!(shape, Shape::Capsule { half_segment: Vec2::new(2.0, 0.0), radius: 1.0 });
    /// assert!(shape.contains_point(pos, [5.0, 0.0]));
    /// ```
    #[must_use]
    pub fn capsule_between(a: impl Into<Vec2>, b: impl Into<Vec2>, radius: f32) -> (Shape, Vec2) {
        let (a, b) = (a.into(), b.into());
        let shape = Shape::Capsule {
            half_segment: b * 0.5 - a * 0.5,
            radius,
        };
        (shape, a * 0.5 + b * 0.5)
    }

    /// The tight bounding box of the shape at `pos`.
    ///
    /// Meaningful for valid shapes at finite positions; this is the box to
    /// give a [`QuadTree`](crate::QuadTree) for the broad phase.
    ///
    /// The box and the exact tests round differently: two shapes that
    /// [`contact`](Shape::contact) and [`intersects`](Shape::intersects)
    /// call touching, at a gap below their rounding, can have boxes one
    /// `f32` step apart, which a broad phase over these boxes misses.
    /// [`CollisionWorld`](crate::CollisionWorld) grows each box by 2⁻¹⁹ of
    /// its largest coordinate for that reason; a broad phase written by hand
    /// that must find such pairs can grow its boxes the same way (see the
    /// second example).
    ///
    /// ```
    /// use quadrat::{Aabb, Shape, Vec2};
    /// let capsule = Shape::Capsule { half_segment: Vec2::new(3.0, -1.0), radius: 0.5 };
    /// assert_eq!(capsule.aabb([10.0, 10.0]), Aabb::new([6.5, 8.5], [13.5, 11.5]));
    /// assert_eq!(Shape::Point.aabb([1.0, 2.0]), Aabb::from_point([1.0, 2.0]));
    /// ```
    ///
    /// Near a million, a circle and a capsule whose true gap is about 0.0035
    /// touch by the exact test, while their boxes miss by one step:
    ///
    /// ```
    /// use quadrat::{Shape, Vec2};
    /// let a = Shape::Circle { radius: 0.21667653 };
    /// let b = Shape::Capsule { half_segment: Vec2::new(0.90915215, 0.0), radius: 0.37067962 };
    /// let (pa, pb) = (Vec2::new(999999.75, 999999.06), Vec2::new(1000001.25, 999999.06));
    /// assert!(a.intersects(pa, &b, pb));
    /// assert!(!a.aabb(pa).intersects(&b.aabb(pb)));
    /// // Grown as the world grows them, the boxes meet.
    /// let grown = |box_: quadrat::Aabb| {
    ///     let m = [box_.min.x, box_.min.y, box_.max.x, box_.max.y]
    ///         .iter()
    ///         .fold(0.0f32, |m, v| m.max(v.abs()));
    ///     box_.expand(m / (1u32 << 19) as f32)
    /// };
    /// assert!(grown(a.aabb(pa)).intersects(&grown(b.aabb(pb))));
    /// ```
    #[inline]
    #[must_use]
    pub fn aabb(&self, pos: impl Into<Vec2>) -> Aabb {
        let pos = pos.into();
        match *self {
            Shape::Circle { radius } => Aabb::from_center(pos, Vec2::splat(radius)),
            Shape::Aabb { half_extents } => Aabb::from_center(pos, half_extents),
            Shape::Point => Aabb::from_point(pos),
            Shape::Capsule {
                half_segment: h,
                radius,
            } => Aabb::from_center(pos, [h.x.abs() + radius, h.y.abs() + radius]),
        }
    }

    /// `true` when the shape is valid; see [`Shape::validate`].
    #[inline]
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.validate().is_ok()
    }

    /// Checks the shape: every size finite, and no radius or half extent
    /// negative. A capsule's `half_segment` may point any way.
    ///
    /// Methods given an invalid shape never panic: they answer `false`,
    /// `None` or NaN, as each says.
    ///
    /// ```
    /// use quadrat::{Error, Shape, Vec2};
    /// assert!(Shape::Circle { radius: 0.0 }.validate().is_ok());
    /// let err = Shape::Circle { radius: -1.0 }.validate().unwrap_err();
    /// assert_eq!(err, Error::Negative { field: "radius", value: -1.0 });
    /// let bad = Shape::Aabb { half_extents: Vec2::new(1.0, f32::NAN) };
    /// assert_eq!(bad.validate().unwrap_err().to_string(), "half_extents.y is NaN");
    /// assert!(!bad.intersects([0.0, 0.0], &Shape::Point, [0.0, 0.0]));
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        match *self {
            Shape::Point => Ok(()),
            Shape::Circle { radius } => check(&[("radius", radius)], 0),
            Shape::Aabb { half_extents: h } => {
                check(&[("half_extents.x", h.x), ("half_extents.y", h.y)], 0)
            }
            Shape::Capsule {
                half_segment: h,
                radius,
            } => check(
                &[
                    ("half_segment.x", h.x),
                    ("half_segment.y", h.y),
                    ("radius", radius),
                ],
                2,
            ),
        }
    }

    /// `true` when `p` lies inside the shape at `pos`, or on its boundary.
    ///
    /// Agrees exactly with [`Shape::intersects`] against a [`Shape::Point`]
    /// at `p`, and with [`Shape::distance_to_point`] being 0. `false` for an
    /// invalid shape or a non-finite `pos` or `p`.
    ///
    /// ```
    /// use quadrat::{Shape, Vec2};
    /// let capsule = Shape::Capsule { half_segment: Vec2::new(2.0, 0.0), radius: 1.0 };
    /// assert!(capsule.contains_point([0.0, 0.0], [3.0, 0.0])); // on the rim
    /// assert!(capsule.contains_point([0.0, 0.0], [-2.0, 1.0]));
    /// assert!(!capsule.contains_point([0.0, 0.0], [2.8, 0.8]));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_point(&self, pos: impl Into<Vec2>, p: impl Into<Vec2>) -> bool {
        narrow::intersects(self, pos.into(), &Shape::Point, p.into())
    }

    /// Euclidean distance from `p` to the shape at `pos`; 0 inside or on
    /// the boundary. NaN for an invalid shape or a non-finite `pos` or `p`.
    ///
    /// ```
    /// use quadrat::{Shape, Vec2};
    /// let b = Shape::Aabb { half_extents: Vec2::new(1.0, 1.0) };
    /// assert_eq!(b.distance_to_point([0.0, 0.0], [4.0, 5.0]), 5.0);
    /// assert_eq!(b.distance_to_point([0.0, 0.0], [0.5, 0.0]), 0.0);
    /// assert!(Shape::Circle { radius: -1.0 }.distance_to_point([0.0, 0.0], [1.0, 0.0]).is_nan());
    /// ```
    #[must_use]
    pub fn distance_to_point(&self, pos: impl Into<Vec2>, p: impl Into<Vec2>) -> f32 {
        let (pos, p) = (pos.into(), p.into());
        if !narrow::usable(self, pos) || !p.is_finite() {
            return f32::NAN;
        }
        let (core, radius) = narrow::core(self, pos);
        (narrow::point_contact(p, &core).sep - radius).max(0.0)
    }

    /// Where `ray` first enters the shape at `pos`, if it does so within the
    /// Euclidean distance `max_dist` of its origin.
    ///
    /// When the origin is inside the shape (or on its boundary), the hit is
    /// at distance 0 and its normal is the reversed unit direction of the
    /// ray: the one normal that is always defined and faces the ray.
    /// Otherwise the normal is the outward normal at the entry point; where
    /// that is not unique, it is the normal of the side entered last (a box
    /// corner: the `x` side when both are entered at once), and for a shape
    /// without area (a point, a capsule of radius 0 hit at an end) it is the
    /// reversed direction of the ray.
    ///
    /// `None` when the ray misses, the shape is invalid, `pos` is not
    /// finite, the ray fails [`Ray::validate`], or `max_dist` is NaN or
    /// negative. `max_dist` may be infinite. A ray that does not enter the
    /// shape's [`aabb`](Shape::aabb) (tested in `f64`, as
    /// [`Ray::intersect_aabb`] does) misses, even where rounding in the
    /// shape's own test would call it a grazing hit. Likewise the distance
    /// is never less than where the ray enters that box (as
    /// [`Ray::intersect_aabb`] gives it): where the shape's own test rounds
    /// below it, the box's entry is the distance. So a tree of the shapes'
    /// boxes, whose ray casts prune and rank by box entries, ranks bodies
    /// as their shapes' distances do (`CollisionWorld::raycast`).
    ///
    /// ```
    /// use quadrat::{Ray, RayHit, Shape, Vec2};
    /// let b = Shape::Aabb { half_extents: Vec2::new(1.0, 1.0) };
    /// let ray = Ray::new([-5.0, 0.5], [1.0, 0.0]);
    /// let hit = b.raycast([0.0, 0.0], ray, f32::INFINITY).unwrap();
    /// assert_eq!(hit, RayHit { dist: 4.0, normal: Vec2::new(-1.0, 0.0) });
    /// assert_eq!(b.raycast([0.0, 0.0], ray, 3.0), None);
    /// // From inside: distance 0, the normal faces the ray.
    /// let inside = b.raycast([0.0, 0.0], Ray::new([0.0, 0.0], [0.0, 3.0]), 1.0).unwrap();
    /// assert_eq!(inside, RayHit { dist: 0.0, normal: Vec2::new(0.0, -1.0) });
    /// ```
    #[must_use]
    pub fn raycast(&self, pos: impl Into<Vec2>, ray: Ray, max_dist: f32) -> Option<RayHit> {
        let pos = pos.into();
        if !narrow::usable(self, pos)
            || ray.validate().is_err()
            || max_dist.is_nan()
            || max_dist < 0.0
        {
            return None;
        }
        let u = narrow::unit(ray.direction);
        let o = ray.origin;
        if self.contains_point(pos, o) {
            return Some(RayHit {
                dist: 0.0,
                normal: -u,
            });
        }
        // A hit on the shape is a hit on its box, as the tree's ray casts
        // test boxes (in `f64`, along the ray as given): rounding in the
        // tests below must not report a ray that passes beside the box, as
        // one passing a circle of radius 0 a few parts in 10¹² away would
        // be. Otherwise a body could be hit here and pruned by the tree.
        // (`Ray::intersect_aabb`'s test, kept in `f64` for the far start.)
        let bounds = self.aabb(pos);
        let t = crate::geom::RayCast::new(&ray, f32::INFINITY)?.enter(&bounds)?;
        let entry = t as f32;
        // From farther than 64 times the size of a shape that has one, `f32`
        // arithmetic from the origin rounds by more than the shape's size:
        // start instead a little before the ray enters the shape's box (in
        // `f64`), and add that distance back.
        let size = bounds.width().max(bounds.height());
        let mut skip = 0.0f64;
        let mut o = o;
        if size > 0.0 && t > 64.0 * f64::from(size) {
            (skip, o) = closer_origin(&ray, &bounds, t, size)?;
        }
        let (core, radius) = narrow::core(self, pos);
        let mut hit = match core {
            Core::Point(c) => ray_disc(o, u, c, radius),
            Core::Segment(s) => ray_capsule(o, u, &s, radius),
            Core::Box(b) => ray_box(o, u, &b),
        }?;
        if skip > 0.0 {
            hit.dist = (skip + f64::from(hit.dist)) as f32;
        }
        // Never nearer than where the ray enters the box: the tree's ray
        // casts rank a hit no nearer than its box's entry, and the shape's
        // own test in `f32` can round a unit in the last place below it (a
        // point hit head-on from 400 units away). The world's ray cast
        // then ranked such a body by the raised distance and reported the
        // lower one, so it lost a tie it should have won by key.
        if hit.dist < entry {
            hit.dist = entry;
        }
        (hit.dist <= max_dist && hit.dist.is_finite() && hit.normal.is_finite()).then_some(hit)
    }

    /// `true` when this shape at `pos` and `other` at `other_pos` share at
    /// least one point. Touching counts.
    ///
    /// Always equal to `self.contact(..).is_some()`, and symmetric. `false`
    /// when either shape is invalid or either position is not finite.
    ///
    /// ```
    /// use quadrat::{Shape, Vec2};
    /// let a = Shape::Circle { radius: 2.0 };
    /// let b = Shape::Circle { radius: 3.0 };
    /// assert!(a.intersects([0.0, 0.0], &b, [3.0, 4.0])); // touching at distance 5
    /// assert!(!a.intersects([0.0, 0.0], &b, [3.0, 4.5]));
    /// let wall = Shape::Aabb { half_extents: Vec2::new(1.0, 1.0) };
    /// assert!(wall.intersects([0.0, 0.0], &wall, [2.0, 2.0])); // corners touch
    /// ```
    #[inline]
    #[must_use]
    pub fn intersects(
        &self,
        pos: impl Into<Vec2>,
        other: &Shape,
        other_pos: impl Into<Vec2>,
    ) -> bool {
        narrow::intersects(self, pos.into(), other, other_pos.into())
    }

    /// How this shape at `pos` and `other` at `other_pos` overlap, or `None`
    /// when they do not. Touching gives a contact of depth 0.
    ///
    /// The [`Contact`]'s normal points from `self` towards `other`, and
    /// moving `other` by `normal * depth` (or `self` by `-normal * depth`)
    /// leaves the two just touching: `depth` is the exact penetration depth,
    /// the length of the shortest such move.
    ///
    /// Swapping the shapes negates the normal and changes nothing else, bit
    /// for bit. To make that hold, the two shapes are put in a fixed order
    /// first (points, circles, capsules, boxes; shapes of one kind by
    /// position, then size), and where the geometry leaves the direction
    /// open, the choice below is made for the shapes in that order:
    ///
    /// - Centres that coincide (two circles or points with the same centre; a
    ///   point or circle centred exactly on a capsule's segment): `+x`, or
    ///   for a segment its normal pointing right (up when the segment is
    ///   horizontal). Two points touch only when they are equal, with depth 0.
    /// - Boxes that overlap, or a point or circle centred inside a box: the
    ///   axis of least penetration; equal depths prefer `x`, then the
    ///   positive direction.
    /// - The same shape at the same position twice has no order, and gets
    ///   the same answer both ways.
    ///
    /// `None` when either shape is invalid or either position is not
    /// finite, and when the result would not be finite (coordinates so
    /// large that the arithmetic overflows `f32`).
    ///
    /// ```
    /// use quadrat::{Shape, Vec2};
    /// let a = Shape::Aabb { half_extents: Vec2::new(2.0, 1.0) };
    /// let b = Shape::Aabb { half_extents: Vec2::new(1.0, 1.0) };
    /// let c = a.contact([0.0, 0.0], &b, [2.5, 0.5]).unwrap();
    /// assert_eq!((c.normal, c.depth), (Vec2::new(1.0, 0.0), 0.5));
    /// assert_eq!(c.point, Vec2::new(1.75, 0.25)); // the middle of the overlap
    /// let back = b.contact([2.5, 0.5], &a, [0.0, 0.0]).unwrap();
    /// assert_eq!((back.normal, back.depth), (-c.normal, c.depth));
    /// // Moved apart by the depth, they touch along an edge.
    /// let touch = a.contact([0.0, 0.0], &b, [3.0, 0.5]).unwrap();
    /// assert_eq!(touch.depth, 0.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn contact(
        &self,
        pos: impl Into<Vec2>,
        other: &Shape,
        other_pos: impl Into<Vec2>,
    ) -> Option<Contact> {
        narrow::contact(self, pos.into(), other, other_pos.into())
    }
}

/// The first failing field: any non-finite one, then any negative one from
/// `fields[sizes..]` (the earlier ones may be negative).
fn check(fields: &[(&'static str, f32)], sizes: usize) -> Result<(), Error> {
    for &(field, value) in fields {
        if !value.is_finite() {
            return Err(Error::NonFinite { field, value });
        }
    }
    for &(field, value) in &fields[sizes..] {
        if value < 0.0 {
            return Err(Error::Negative { field, value });
        }
    }
    Ok(())
}

/// A point of `ray` shortly before it enters `bounds` at distance `t`
/// (more than 64 `size`s away), and its distance from the origin, for the
/// `f32` tests to start from; `None` when the ray passes by the box.
///
/// The point is computed in `f64` on the ray as given, not along its
/// direction rounded to a unit vector in `f32`: that rounding, a few parts
/// in 10⁸, would tilt the ray by about a unit from 10⁸ away, enough to miss
/// a shape it crosses or to hit one it passes. Nor may the products round
/// in proportion to the origin's distance (about a hundred units at 10¹⁷):
/// the multiple of the direction is split into its top 29 significant bits
/// and the rest, each of whose products with a coordinate of the direction
/// (24 bits) is exact. Each sum then rounds in proportion to its result,
/// at most the point's coordinates plus 2⁻²⁹ of the origin's distance, so
/// that from 10¹⁸ away the point is within a millionth of a unit of the ray
/// before it is rounded to `f32`.
///
/// The point is taken 32 sizes before the entry, then twice as far back
/// until the ray from it, as rounded to `f32`, still enters the box ahead
/// of it, and within 4 times that distance: `t` itself, computed from the
/// far origin, may lie past the entry by its rounding, a few parts in 10¹⁶
/// of `t`, and a point much farther from the box than it was meant to be
/// comes of a `t` rounded by more than that distance. But no farther back
/// than that rounding needs (2⁻⁴⁰ of `t`), nor than 2¹⁶ sizes, beyond which
/// the point's own rounding to `f32` could put the ray in the box. When no
/// such point sees the box ahead, the ray passes by it, though the test
/// from the far origin, rounded as much across the ray, said it entered
/// (by up to 9 units from 10¹⁸ away). Only from at most 2¹⁶ sizes away,
/// where the `f32` tests round by less than 2⁻⁸ of the size, do they start
/// from the origin instead (as they do from 64 sizes or less).
fn closer_origin(ray: &Ray, bounds: &Aabb, t: f64, size: f32) -> Option<(f64, Vec2)> {
    let (o, d) = (ray.origin, ray.direction);
    let (dx, dy) = (f64::from(d.x), f64::from(d.y));
    let len = (dx * dx + dy * dy).sqrt();
    let size = f64::from(size);
    let limit = (64.0 * size + (t * 2f64.powi(-40)).min(65536.0 * size)).min(t);
    let mut back = 32.0 * size;
    while back < limit {
        let k = (t - back) / len;
        let hi = f64::from_bits(k.to_bits() & !((1 << 24) - 1));
        let lo = k - hi;
        let at = |o: f32, d: f64| (f64::from(o) + hi * d + lo * d) as f32;
        let p = Vec2::new(at(o.x, dx), at(o.y, dy));
        let ahead = crate::geom::RayCast::new(&Ray::new(p, d), f32::INFINITY)
            .and_then(|cast| cast.enter(bounds))
            .is_some_and(|e| e > 0.0 && e <= 4.0 * back);
        if ahead {
            return Some((k * len, p));
        }
        back *= 2.0;
    }
    (t <= 65536.0 * size).then_some((0.0, o))
}

/// The entry of the ray `o + t u` (`u` unit, `o` outside) into the disc.
fn ray_disc(o: Vec2, u: Vec2, c: Vec2, r: f32) -> Option<RayHit> {
    let m = o - c;
    let closest = -u.dot(m); // distance along the ray to the closest approach
    let off = narrow::cross(u, m).abs(); // distance from the centre to the line
    if closest < 0.0 || off > r {
        return None;
    }
    let half_chord = ((r - off) * (r + off)).sqrt();
    let dist = (closest - half_chord).max(0.0);
    // A disc of radius 0 (a point, a capsule's end) has no outward
    // normal: it faces the ray, as the docs say, rather than along
    // whatever rounding leaves of `m + u * dist`.
    let n = m + u * dist;
    let normal = if r > 0.0 && (n.x != 0.0 || n.y != 0.0) {
        narrow::unit(n)
    } else {
        -u
    };
    Some(RayHit { dist, normal })
}

/// The entry of the ray `o + t u` (`u` unit, `o` outside) into the box.
fn ray_box(o: Vec2, u: Vec2, b: &Aabb) -> Option<RayHit> {
    let mut enter = f32::NEG_INFINITY;
    let mut exit = f32::INFINITY;
    let mut normal = -u;
    for (o, d, lo, hi, axis) in [
        (o.x, u.x, b.min.x, b.max.x, Vec2::new(1.0, 0.0)),
        (o.y, u.y, b.min.y, b.max.y, Vec2::new(0.0, 1.0)),
    ] {
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
            continue;
        }
        let (t_lo, t_hi) = ((lo - o) / d, (hi - o) / d);
        let (near, far, n) = if d > 0.0 {
            (t_lo, t_hi, -axis)
        } else {
            (t_hi, t_lo, axis)
        };
        if near > enter {
            enter = near;
            normal = n;
        }
        exit = exit.min(far);
    }
    if enter > exit || exit < 0.0 {
        return None;
    }
    Some(RayHit {
        dist: enter.max(0.0),
        normal,
    })
}

/// The entry of the ray `o + t u` (`u` unit, `o` outside) into the capsule:
/// through a flat side, or else through one of the round ends.
fn ray_capsule(o: Vec2, u: Vec2, s: &Segment, r: f32) -> Option<RayHit> {
    let mut best: Option<RayHit> = None;
    let offset = s.perp.dot(o - s.c);
    let approach = s.perp.dot(u);
    if offset.abs() > r && approach != 0.0 && (approach > 0.0) != (offset > 0.0) {
        let side = if offset > 0.0 { 1.0 } else { -1.0 };
        let dist = (side * r - offset) / approach;
        let along = s.dir.dot(o + u * dist - s.c);
        if along.abs() <= s.len {
            best = Some(RayHit {
                dist,
                normal: s.perp * side,
            });
        }
    }
    for end in [s.c - s.h, s.c + s.h] {
        if let Some(hit) = ray_disc(o, u, end, r)
            && best.is_none_or(|b| hit.dist < b.dist)
        {
            best = Some(hit);
        }
    }
    best
}
