//! [`CollisionWorld<T>`]: bodies with exact shapes, collision layers, contact
//! events and queries, on top of a [`QuadTree`].
//!
//! One concept per file: this file holds the bodies and their storage,
//! [`step`](step.rs) the broad and narrow phases and the events, and
//! [`query`](query.rs) the questions asked of the world.

mod query;
mod step;

pub use step::{ContactPair, Events};

use crate::error::Error;
use crate::geom::{Aabb, Vec2};
use crate::key::Key;
use crate::shape::Shape;
use crate::tree::{Config, QuadTree};

/// The largest magnitude of a body's position coordinates and of its
/// shape's sizes (radius, half extents, half segment) that a
/// [`CollisionWorld`] accepts: 10¹⁸.
///
/// The exact tests run in `f32`, and within this range none of their
/// squares and products overflows, so contacts, distances and ray hits stay
/// exact to `f32` rounding. Larger values are refused with
/// [`Error::OutOfRange`] (naming the field), and queries given a point, a
/// shape or a ray origin beyond it find nothing. The world's bounds, the
/// tree's, are not limited.
///
/// ```
/// use quadrat::{Aabb, CollisionWorld, Error, Shape, WORLD_LIMIT};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// assert!(world.try_add(Shape::Circle { radius: 1.0 }, [WORLD_LIMIT, 0.0], 1, 1, ()).is_ok());
/// let err = world.try_add(Shape::Circle { radius: 2e19 }, [0.0, 0.0], 1, 1, ()).unwrap_err();
/// assert_eq!(err, Error::OutOfRange { field: "radius", value: 2e19 });
/// assert_eq!(world.len(), 1);
/// ```
pub const WORLD_LIMIT: f32 = 1.0e18;

/// The relative margin by which a body's box is grown for the broad phase:
/// 2⁻¹⁹ of the box's largest coordinate magnitude, about 16 units in the
/// last place of `f32`.
///
/// The exact test and the bounding box round differently. Two circles that
/// [`Shape::contact`] reports as touching (depth 0) can have `f32` boxes that
/// miss each other by one unit in the last place. Growing every box by this
/// margin keeps such pairs in the broad phase; the exact test still decides.
const MARGIN: f32 = 1.0 / (1u32 << 19) as f32;

/// The box a body is stored under in the tree: the shape's tight box grown
/// by [`MARGIN`] times its largest coordinate magnitude.
#[inline]
pub(crate) fn broad_box(shape: &Shape, pos: Vec2) -> Aabb {
    let b = shape.aabb(pos);
    let magnitude = b
        .min
        .x
        .abs()
        .max(b.min.y.abs())
        .max(b.max.x.abs())
        .max(b.max.y.abs());
    b.expand((magnitude * MARGIN).max(MIN_MARGIN))
}

/// The smallest margin, 2⁻¹²⁰ (about 7.5e-37): near 0 the relative margin
/// vanishes below the spacing of subnormal `f32` values, while the exact
/// tests still round by a few of those steps. Invisible at any ordinary
/// scale.
const MIN_MARGIN: f32 = 7.523_164e-37;

/// Which bodies a body interacts with: see [`CollisionWorld`] for the rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    pub(crate) layer: u32,
    pub(crate) mask: u32,
}

impl Filter {
    /// The layer rule: each body's layer meets the other's mask.
    #[inline(always)]
    pub(crate) fn interacts(self, other: Filter) -> bool {
        (self.layer & other.mask) != 0 && (other.layer & self.mask) != 0
    }

    /// Both filters' bits or-ed: a group's union interacts with another's
    /// whenever any member of one interacts with any member of the other.
    #[inline(always)]
    pub(crate) fn union(self, other: Filter) -> Filter {
        Filter {
            layer: self.layer | other.layer,
            mask: self.mask | other.mask,
        }
    }
}

/// A body's shape, position and collision filter, as
/// [`CollisionWorld::body`] and [`CollisionWorld::iter`] report them.
///
/// ```
/// use quadrat::{Aabb, Body, CollisionWorld, Shape, Vec2};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let ball = Shape::Circle { radius: 1.0 };
/// let k = world.add(ball, [5.0, 5.0], 0b01, 0b10, "ball");
/// let body: Body = world.body(k).unwrap();
/// assert_eq!(body, Body { shape: ball, position: Vec2::new(5.0, 5.0), layer: 0b01, mask: 0b10 });
/// assert_eq!(body.aabb(), Aabb::new([4.0, 4.0], [6.0, 6.0]));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Body {
    /// The shape, in local coordinates (centred on `position`).
    pub shape: Shape,
    /// Where the body is.
    pub position: Vec2,
    /// The layers the body is on (bits).
    pub layer: u32,
    /// The layers the body collides with (bits).
    pub mask: u32,
}

impl Body {
    /// The tight bounding box of the body's shape at its position.
    ///
    /// ```
    /// use quadrat::{Aabb, Body, Shape, Vec2};
    /// let body = Body { shape: Shape::Point, position: Vec2::new(1.0, 2.0), layer: 1, mask: 1 };
    /// assert_eq!(body.aabb(), Aabb::from_point([1.0, 2.0]));
    /// ```
    #[inline]
    #[must_use]
    pub fn aabb(&self) -> Aabb {
        self.shape.aabb(self.position)
    }

    /// `true` when this body and `other` pass each other's filter:
    /// `(self.layer & other.mask) != 0 && (other.layer & self.mask) != 0`.
    ///
    /// ```
    /// use quadrat::{Body, Shape, Vec2};
    /// let at = |layer, mask| Body { shape: Shape::Point, position: Vec2::ZERO, layer, mask };
    /// let player = at(0b001, 0b110);
    /// let enemy = at(0b010, 0b001);
    /// let ghost = at(0b100, 0b000); // on a layer, but collides with nothing
    /// assert!(player.interacts(&enemy));
    /// assert!(!player.interacts(&ghost));
    /// ```
    #[inline]
    #[must_use]
    pub fn interacts(&self, other: &Body) -> bool {
        self.filter().interacts(other.filter())
    }

    #[inline]
    fn filter(&self) -> Filter {
        Filter {
            layer: self.layer,
            mask: self.mask,
        }
    }
}

/// A set of bodies (a [`Shape`] at a position, collision layer and mask
/// bits, and a value of type `T`) that finds which of them touch, frame
/// after frame, and answers queries about them.
///
/// # Bodies
/// [`add`](CollisionWorld::add) returns a generational [`Key`]; after
/// [`remove`](CollisionWorld::remove) the key answers `None`/`false`
/// forever. Invalid input (a NaN or infinite position, an invalid shape) is
/// refused with an [`Error`] by the `try_*` methods, and with a panic by the
/// others, and changes nothing.
///
/// # Layers
/// Each body is on the layers set in its `layer` bits and collides with the
/// layers set in its `mask` bits. Two bodies interact when **each one's
/// layer meets the other's mask**:
///
/// ```text
/// (a.layer & b.mask) != 0 && (b.layer & a.mask) != 0
/// ```
///
/// `u32::MAX` for both interacts with every body that has any layer and
/// any mask bit; a mask of 0 interacts with nothing. The filter is applied
/// to each pair the broad phase reports, before the exact test, by reading
/// two entries of a dense array: pairs filtered out cost almost nothing.
/// The step's full pass skips whole runs and subtrees of the tree whose
/// or-ed layers and masks cannot interact (a tile map on a layer that never
/// meets itself is never paired with itself).
/// Queries take a `mask` of their own and find the bodies whose `layer`
/// meets it (`body.layer & mask != 0`).
///
/// # Steps and events
/// [`step`](CollisionWorld::step) finds every touching pair (touching counts,
/// with depth 0) and compares it with the previous step's:
/// pairs that touch now but did not then have **begun**, pairs that touched
/// then but no longer do have **ended**. A pair ends when its bodies move
/// apart, when one of them is removed (or the world cleared) in between,
/// when their shapes change so that they no longer touch, or when their
/// layers change so that they no longer interact. A body removed and a new
/// one added in its slot have different keys, so the old pair ends and the
/// new one begins. Every list is sorted by key pair, and each pair is
/// normalised with `a < b`, so the same calls always give the same
/// results in the same order. In the steady state, a step allocates
/// nothing: its buffers are kept and reused.
///
/// # Broad phase
/// Each body is stored in a [`QuadTree`] under its shape's bounding box,
/// grown by a tiny relative margin (2⁻¹⁹ of the box's largest coordinate,
/// about 16 units in the last place of `f32`; `2e-3` at coordinates near
/// 1000). The exact test and the bounding box round differently, and
/// without the margin two circles that touch exactly could be missed by an
/// ulp. Moving a body updates its box in the tree at once (O(1) while it
/// stays in its node), so queries between steps see the current positions.
/// A step costs in proportion to what changed since the last one: see
/// [`step`](CollisionWorld::step).
///
/// ```
/// use quadrat::{Aabb, CollisionWorld, Shape, Vec2};
///
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let ball = Shape::Circle { radius: 1.0 };
/// let a = world.add(ball, [10.0, 10.0], 1, u32::MAX, "a");
/// let b = world.add(ball, [12.0, 10.0], 1, u32::MAX, "b"); // touching a
/// let c = world.add(ball, [50.0, 50.0], 1, u32::MAX, "c");
///
/// let events = world.step();
/// assert_eq!(events.contacts.len(), 1);
/// assert_eq!((events.began[0].a, events.began[0].b), (a, b));
/// assert_eq!(events.began[0].contact.normal, Vec2::new(1.0, 0.0)); // from a to b
///
/// world.set_position(c, [11.0, 11.5]); // c moves onto both
/// world.set_position(b, [20.0, 10.0]); // b moves away
/// let events = world.step();
/// assert_eq!(events.contacts.len(), 1);
/// assert_eq!((events.began[0].a, events.began[0].b), (a, c));
/// assert_eq!(events.ended, &[(a, b)]);
/// ```
#[derive(Clone, Debug)]
pub struct CollisionWorld<T> {
    /// The broad phase; values are the user's.
    pub(crate) tree: QuadTree<T>,
    /// Per slot (`key.index()`): shape and position. Meaningful for live keys.
    pub(crate) placed: Vec<(Shape, Vec2)>,
    /// Per slot (`key.index()`): layer and mask. Meaningful for live keys.
    pub(crate) filters: Vec<Filter>,
    /// The last step's results and the buffers of the next.
    pub(crate) steps: step::StepBuffers,
    /// The slots whose body was added, moved, reshaped, re-layered or
    /// removed since the last step, each once; `marked[slot]` says whether
    /// a slot is listed.
    pub(crate) changed: Vec<u32>,
    pub(crate) marked: Vec<bool>,
    /// Set by [`clear`](CollisionWorld::clear): every body counts as
    /// changed at the next step.
    pub(crate) all_changed: bool,
}

impl<T> CollisionWorld<T> {
    /// Creates an empty world whose broad phase covers `bounds`, with the
    /// default [`Config`]. Bodies outside `bounds` are kept and found, only
    /// more slowly.
    ///
    /// # Panics
    /// When `bounds` is not a valid box.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld};
    /// let world: CollisionWorld<()> = CollisionWorld::new(Aabb::new([0.0, 0.0], [800.0, 600.0]));
    /// assert!(world.is_empty());
    /// ```
    #[must_use]
    pub fn new(bounds: Aabb) -> CollisionWorld<T> {
        CollisionWorld::with_config(bounds, Config::default())
    }

    /// Creates an empty world with a broad phase configured by `config`.
    ///
    /// # Panics
    /// When `bounds` or `config` is invalid; the message says which.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Config};
    /// let config = Config { max_items: 8, ..Config::default() };
    /// let world: CollisionWorld<()> = CollisionWorld::with_config(Aabb::new([0.0, 0.0], [64.0, 64.0]), config);
    /// assert_eq!(world.tree().config().max_items, 8);
    /// ```
    #[must_use]
    pub fn with_config(bounds: Aabb, config: Config) -> CollisionWorld<T> {
        CollisionWorld {
            tree: QuadTree::with_config(bounds, config),
            placed: Vec::new(),
            filters: Vec::new(),
            steps: step::StepBuffers::default(),
            changed: Vec::new(),
            marked: Vec::new(),
            all_changed: false,
        }
    }

    /// Adds a body and returns its key.
    ///
    /// # Panics
    /// When the position is not finite or the shape is invalid; the message
    /// says why, and nothing changes. [`try_add`](CollisionWorld::try_add)
    /// returns the error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 2.0 }, [5.0, 5.0], 1, u32::MAX, "rock");
    /// assert_eq!(world[k], "rock");
    /// ```
    #[track_caller]
    pub fn add(
        &mut self,
        shape: Shape,
        position: impl Into<Vec2>,
        layer: u32,
        mask: u32,
        value: T,
    ) -> Key {
        match self.try_add(shape, position, layer, mask, value) {
            Ok(key) => key,
            Err(e) => panic!("quadrat: invalid body passed to CollisionWorld::add: {e}"),
        }
    }

    /// Adds a body, or says why it is refused, checking in this order: a NaN
    /// or infinite position coordinate (`position.x`, `position.y`), one
    /// beyond [`WORLD_LIMIT`] ([`Error::OutOfRange`]), an invalid shape (see
    /// [`Shape::validate`]), a shape size beyond [`WORLD_LIMIT`]. Nothing
    /// changes then, and `value` is dropped.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Error, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 1.0 };
    /// let err = world.try_add(ball, [f32::NAN, 0.0], 1, 1, ()).unwrap_err();
    /// assert_eq!(err.to_string(), "position.x is NaN");
    /// let err = world.try_add(Shape::Circle { radius: -1.0 }, [0.0, 0.0], 1, 1, ()).unwrap_err();
    /// assert_eq!(err, Error::Negative { field: "radius", value: -1.0 });
    /// assert!(world.is_empty());
    /// ```
    pub fn try_add(
        &mut self,
        shape: Shape,
        position: impl Into<Vec2>,
        layer: u32,
        mask: u32,
        value: T,
    ) -> Result<Key, Error> {
        let pos = position.into();
        check_position(pos)?;
        check_shape(&shape)?;
        let key = self.tree.try_insert(broad_box(&shape, pos), value)?;
        let idx = key.index() as usize;
        if idx >= self.placed.len() {
            self.placed.resize(idx + 1, (Shape::Point, Vec2::ZERO));
            self.filters.resize(idx + 1, Filter::default());
            self.marked.resize(idx + 1, false);
        }
        self.placed[idx] = (shape, pos);
        self.filters[idx] = Filter { layer, mask };
        self.touch(idx);
        Ok(key)
    }

    /// Removes a body and returns its value; `None` for a stale key.
    ///
    /// Its contacts are reported as ended by the next
    /// [`step`](CollisionWorld::step).
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], 1, 1, "crate");
    /// assert_eq!(world.remove(k), Some("crate"));
    /// assert_eq!(world.remove(k), None); // stale now, forever
    /// ```
    pub fn remove(&mut self, key: Key) -> Option<T> {
        let value = self.tree.remove(key)?;
        self.touch(key.index() as usize);
        Some(value)
    }

    /// Lists slot `idx` as changed since the last step (once).
    #[inline]
    fn touch(&mut self, idx: usize) {
        if !self.marked[idx] {
            self.marked[idx] = true;
            self.changed.push(idx as u32);
        }
    }

    /// Moves a body. Returns `false` for a stale key (and nothing changes).
    ///
    /// # Panics
    /// When the position is not finite; nothing changes then.
    /// [`try_set_position`](CollisionWorld::try_set_position) returns the
    /// error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// assert!(world.set_position(k, [2.0, 3.0]));
    /// assert_eq!(world.position(k), Some(Vec2::new(2.0, 3.0)));
    /// ```
    #[track_caller]
    pub fn set_position(&mut self, key: Key, position: impl Into<Vec2>) -> bool {
        match self.try_set_position(key, position) {
            Ok(()) => true,
            Err(Error::StaleKey) => false,
            Err(e) => {
                panic!("quadrat: invalid position passed to CollisionWorld::set_position: {e}")
            }
        }
    }

    /// Moves a body, or says why not: which coordinate is not finite or is
    /// beyond [`WORLD_LIMIT`], or [`Error::StaleKey`] for a stale key. On
    /// error nothing changes.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// let err = world.try_set_position(k, [0.0, f32::INFINITY]).unwrap_err();
    /// assert_eq!(err.to_string(), "position.y is infinite");
    /// assert_eq!(world.position(k), Some(Vec2::new(1.0, 1.0)));
    /// ```
    pub fn try_set_position(&mut self, key: Key, position: impl Into<Vec2>) -> Result<(), Error> {
        let pos = position.into();
        check_position(pos)?;
        if !self.tree.contains_key(key) {
            return Err(Error::StaleKey);
        }
        let idx = key.index() as usize;
        let old = self.placed[idx].1;
        if (old.x.to_bits(), old.y.to_bits()) == (pos.x.to_bits(), pos.y.to_bits()) {
            return Ok(()); // not a move: nothing to do, now or at the step
        }
        self.tree
            .try_update(key, broad_box(&self.placed[idx].0, pos))?;
        self.placed[idx].1 = pos;
        self.touch(idx);
        Ok(())
    }

    /// Changes a body's shape. Returns `false` for a stale key (and nothing
    /// changes).
    ///
    /// # Panics
    /// When the shape is invalid; nothing changes then.
    /// [`try_set_shape`](CollisionWorld::try_set_shape) returns the error
    /// instead.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 1.0 }, [1.0, 1.0], 1, 1, ());
    /// assert!(world.set_shape(k, Shape::Circle { radius: 3.0 }));
    /// assert_eq!(world.shape(k), Some(Shape::Circle { radius: 3.0 }));
    /// ```
    #[track_caller]
    pub fn set_shape(&mut self, key: Key, shape: Shape) -> bool {
        match self.try_set_shape(key, shape) {
            Ok(()) => true,
            Err(Error::StaleKey) => false,
            Err(e) => panic!("quadrat: invalid shape passed to CollisionWorld::set_shape: {e}"),
        }
    }

    /// Changes a body's shape, or says why not: what is wrong with the shape
    /// (including a size beyond [`WORLD_LIMIT`]), or [`Error::StaleKey`] for
    /// a stale key. On error nothing changes.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 1.0 };
    /// let k = world.add(ball, [1.0, 1.0], 1, 1, ());
    /// let err = world.try_set_shape(k, Shape::Circle { radius: f32::NAN }).unwrap_err();
    /// assert_eq!(err.to_string(), "radius is NaN");
    /// assert_eq!(world.shape(k), Some(ball));
    /// ```
    pub fn try_set_shape(&mut self, key: Key, shape: Shape) -> Result<(), Error> {
        check_shape(&shape)?;
        if !self.tree.contains_key(key) {
            return Err(Error::StaleKey);
        }
        let idx = key.index() as usize;
        self.tree
            .try_update(key, broad_box(&shape, self.placed[idx].1))?;
        self.placed[idx].0 = shape;
        self.touch(idx);
        Ok(())
    }

    /// Puts a body on the layers `layer` (bits). Returns `false` for a stale
    /// key. Takes effect at the next [`step`](CollisionWorld::step) and in
    /// queries at once.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], 0b01, u32::MAX, ());
    /// assert!(world.set_layer(k, 0b10));
    /// assert_eq!(world.layer(k), Some(0b10));
    /// assert_eq!(world.pick([1.0, 1.0], 0b01), vec![]);
    /// assert_eq!(world.pick([1.0, 1.0], 0b10), vec![k]);
    /// ```
    pub fn set_layer(&mut self, key: Key, layer: u32) -> bool {
        if !self.tree.contains_key(key) {
            return false;
        }
        let idx = key.index() as usize;
        if self.filters[idx].layer != layer {
            self.filters[idx].layer = layer;
            self.touch(idx);
        }
        true
    }

    /// Sets the layers a body collides with (bits). Returns `false` for a
    /// stale key. Takes effect at the next [`step`](CollisionWorld::step).
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// let b = world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// assert_eq!(world.step().contacts.len(), 1);
    /// assert!(world.set_mask(b, 0)); // b collides with nothing now
    /// assert_eq!(world.mask(b), Some(0));
    /// let events = world.step();
    /// assert!(events.contacts.is_empty());
    /// assert_eq!(events.ended, &[(a, b)]);
    /// ```
    pub fn set_mask(&mut self, key: Key, mask: u32) -> bool {
        if !self.tree.contains_key(key) {
            return false;
        }
        let idx = key.index() as usize;
        if self.filters[idx].mask != mask {
            self.filters[idx].mask = mask;
            self.touch(idx);
        }
        true
    }

    /// A body's shape, position, layer and mask; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 2.0], 4, 6, ());
    /// let body = world.body(k).unwrap();
    /// assert_eq!((body.shape, body.position, body.layer, body.mask), (Shape::Point, Vec2::new(1.0, 2.0), 4, 6));
    /// world.remove(k);
    /// assert_eq!(world.body(k), None);
    /// ```
    #[must_use]
    pub fn body(&self, key: Key) -> Option<Body> {
        self.tree.contains_key(key).then(|| self.body_at(key))
    }

    /// The body of a live key.
    #[inline]
    pub(crate) fn body_at(&self, key: Key) -> Body {
        let idx = key.index() as usize;
        let (shape, position) = self.placed[idx];
        let Filter { layer, mask } = self.filters[idx];
        Body {
            shape,
            position,
            layer,
            mask,
        }
    }

    /// A body's shape; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 2.0 }, [1.0, 2.0], 1, 1, ());
    /// assert_eq!(world.shape(k), Some(Shape::Circle { radius: 2.0 }));
    /// ```
    #[must_use]
    pub fn shape(&self, key: Key) -> Option<Shape> {
        self.body(key).map(|b| b.shape)
    }

    /// A body's position; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 2.0], 1, 1, ());
    /// assert_eq!(world.position(k), Some(Vec2::new(1.0, 2.0)));
    /// ```
    #[must_use]
    pub fn position(&self, key: Key) -> Option<Vec2> {
        self.body(key).map(|b| b.position)
    }

    /// A body's layer bits; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 2.0], 0b100, 0b011, ());
    /// assert_eq!((world.layer(k), world.mask(k)), (Some(0b100), Some(0b011)));
    /// ```
    #[must_use]
    pub fn layer(&self, key: Key) -> Option<u32> {
        self.body(key).map(|b| b.layer)
    }

    /// A body's mask bits; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 2.0], 1, 0b110, ());
    /// world.remove(k);
    /// assert_eq!(world.mask(k), None);
    /// ```
    #[must_use]
    pub fn mask(&self, key: Key) -> Option<u32> {
        self.body(key).map(|b| b.mask)
    }

    /// The tight bounding box of a body's shape; `None` for a stale key.
    /// (The box stored in [`tree`](CollisionWorld::tree) is this one grown
    /// by the broad phase's tiny margin.)
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 1.0 }, [5.0, 5.0], 1, 1, ());
    /// assert_eq!(world.aabb(k), Some(Aabb::new([4.0, 4.0], [6.0, 6.0])));
    /// assert!(world.tree().aabb(k).unwrap().contains(&world.aabb(k).unwrap()));
    /// ```
    #[must_use]
    pub fn aabb(&self, key: Key) -> Option<Aabb> {
        self.body(key).map(|b| b.aabb())
    }

    /// A body's value; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], 1, 1, 10);
    /// *world.get_mut(k).unwrap() -= 3;
    /// assert_eq!(world.get(k), Some(&7));
    /// ```
    #[must_use]
    pub fn get(&self, key: Key) -> Option<&T> {
        self.tree.get(key)
    }

    /// A body's value, mutably; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], 1, 1, String::from("crate"));
    /// world.get_mut(k).unwrap().push_str("-1");
    /// assert_eq!(world[k], "crate-1");
    /// ```
    #[must_use]
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        self.tree.get_mut(key)
    }

    /// `true` when `key` names a live body of this world.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// assert!(world.contains_key(k));
    /// world.remove(k);
    /// assert!(!world.contains_key(k));
    /// ```
    #[must_use]
    pub fn contains_key(&self, key: Key) -> bool {
        self.tree.contains_key(key)
    }

    /// Number of bodies.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// assert!(world.is_empty());
    /// world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// assert_eq!(world.len(), 1);
    /// assert!(!world.is_empty());
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// `true` when the world holds no bodies.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// Every body as `(key, body, value)`, in key order.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// world.add(Shape::Point, [1.0, 1.0], 1, 1, 'a');
    /// world.add(Shape::Point, [2.0, 1.0], 1, 1, 'b');
    /// let names: String = world.iter().map(|(_, _, v)| *v).collect();
    /// assert_eq!(names, "ab");
    /// let xs: Vec<f32> = world.iter().map(|(_, body, _)| body.position.x).collect();
    /// assert_eq!(xs, [1.0, 2.0]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (Key, Body, &T)> + '_ {
        self.tree.iter().map(|(k, _, v)| (k, self.body_at(k), v))
    }

    /// Every body as `(key, body, value)` with mutable values, in key order.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// world.add(Shape::Point, [1.0, 1.0], 1, 1, 1);
    /// for (_, body, hp) in world.iter_mut() {
    ///     *hp += body.position.x as i32;
    /// }
    /// assert_eq!(world.values().copied().collect::<Vec<_>>(), [2]);
    /// ```
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Key, Body, &mut T)> + '_ {
        let (placed, filters) = (&self.placed, &self.filters);
        self.tree.iter_mut().map(move |(k, _, v)| {
            let idx = k.index() as usize;
            let (shape, position) = placed[idx];
            let Filter { layer, mask } = filters[idx];
            let body = Body {
                shape,
                position,
                layer,
                mask,
            };
            (k, body, v)
        })
    }

    /// The keys of all bodies, in order.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], 1, 1, "a");
    /// let b = world.add(Shape::Point, [2.0, 1.0], 1, 1, "b");
    /// assert_eq!(world.keys().collect::<Vec<_>>(), [a, b]);
    /// assert_eq!(world.values().copied().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.tree.keys()
    }

    /// The values of all bodies, in key order.
    pub fn values(&self) -> impl Iterator<Item = &T> + '_ {
        self.tree.values()
    }

    /// Removes every body, keeping the allocations. Every key handed out
    /// before is invalidated, and the next [`step`](CollisionWorld::step)
    /// reports every contact of the last one as ended.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// let b = world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// world.step();
    /// world.clear();
    /// assert!(world.is_empty() && !world.contains_key(a));
    /// assert_eq!(world.step().ended, &[(a, b)]);
    /// ```
    pub fn clear(&mut self) {
        self.tree.clear();
        self.all_changed = true;
    }

    /// The broad phase: every body's box (its shape's box grown by the tiny
    /// margin) with its value, for drawing the tree or asking it directly.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 1.0 }, [5.0, 5.0], 1, 1, ());
    /// // Candidates by box: the tree's view, before any exact test.
    /// let near: Vec<_> = world.tree().query(Aabb::new([0.0, 0.0], [4.5, 4.5])).map(|(k, _)| k).collect();
    /// assert_eq!(near, vec![k]);
    /// assert!(world.tree().nodes().count() >= 1);
    /// ```
    #[must_use]
    pub fn tree(&self) -> &QuadTree<T> {
        &self.tree
    }
}

impl<T> core::ops::Index<Key> for CollisionWorld<T> {
    type Output = T;
    /// # Panics
    /// When the key is stale.
    fn index(&self, key: Key) -> &T {
        self.get(key).expect("quadrat: stale or foreign key")
    }
}

impl<T> core::ops::IndexMut<Key> for CollisionWorld<T> {
    /// # Panics
    /// When the key is stale.
    fn index_mut(&mut self, key: Key) -> &mut T {
        self.get_mut(key).expect("quadrat: stale or foreign key")
    }
}

/// Refuses a non-finite position, naming the coordinate.
fn check_position(pos: Vec2) -> Result<(), Error> {
    for (field, value) in [("position.x", pos.x), ("position.y", pos.y)] {
        if !value.is_finite() {
            return Err(Error::NonFinite { field, value });
        }
    }
    for (field, value) in [("position.x", pos.x), ("position.y", pos.y)] {
        in_range(field, value)?;
    }
    Ok(())
}

/// Checks a body's shape: valid ([`Shape::validate`]), and every size
/// within [`WORLD_LIMIT`].
fn check_shape(shape: &Shape) -> Result<(), Error> {
    shape.validate()?;
    match *shape {
        Shape::Point => Ok(()),
        Shape::Circle { radius } => in_range("radius", radius),
        Shape::Aabb { half_extents: h } => {
            in_range("half_extents.x", h.x)?;
            in_range("half_extents.y", h.y)
        }
        Shape::Capsule {
            half_segment: h,
            radius,
        } => {
            in_range("half_segment.x", h.x)?;
            in_range("half_segment.y", h.y)?;
            in_range("radius", radius)
        }
    }
}

#[inline]
fn in_range(field: &'static str, value: f32) -> Result<(), Error> {
    if value.abs() <= WORLD_LIMIT {
        Ok(())
    } else {
        Err(Error::OutOfRange { field, value })
    }
}

/// `true` when a query's point lies within the world's range.
#[inline]
pub(crate) fn point_in_range(p: Vec2) -> bool {
    p.x.abs() <= WORLD_LIMIT && p.y.abs() <= WORLD_LIMIT
}

/// `true` when a query's shape and position are valid and within range.
#[inline]
pub(crate) fn body_in_range(shape: &Shape, pos: Vec2) -> bool {
    check_position(pos).is_ok() && check_shape(shape).is_ok()
}
