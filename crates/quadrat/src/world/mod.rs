//! [`CollisionWorld<T>`]: bodies with exact shapes, collision layers, contact
//! events and queries, on top of a [`QuadTree`].
//!
//! One concept per file: this file holds the bodies and their storage,
//! [`step`](step.rs) the broad and narrow phases and the events, and
//! [`query`](query.rs) the questions asked of the world, [`filter`](filter.rs)
//! the collision layers, and `snapshot.rs` (feature `serde`) saving and
//! restoring a whole world.

mod filter;
mod query;
#[cfg(feature = "serde")]
mod snapshot;
mod step;

pub use filter::{Filter, Layers};
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
/// use quadrat::{Aabb, CollisionWorld, Error, Filter, Shape, WORLD_LIMIT};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// assert!(world.try_add(Shape::Circle { radius: 1.0 }, [WORLD_LIMIT, 0.0], Filter::ALL, ()).is_ok());
/// let err = world.try_add(Shape::Circle { radius: 2e19 }, [0.0, 0.0], Filter::ALL, ()).unwrap_err();
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
    // Plain comparisons: every caller checks the body first, so no
    // coordinate is NaN, and the NaN handling of `f32::max` only costs
    // (with it, a `set_position` ran 4% more instructions).
    let hi = |a: f32, b: f32| if a > b { a } else { b };
    let magnitude = hi(
        hi(b.min.x.abs(), b.min.y.abs()),
        hi(b.max.x.abs(), b.max.y.abs()),
    );
    b.expand(hi(magnitude * MARGIN, MIN_MARGIN))
}

/// The smallest margin, 2⁻¹²⁰ (about 7.5e-37): near 0 the relative margin
/// vanishes below the spacing of subnormal `f32` values, while the exact
/// tests still round by a few of those steps. Invisible at any ordinary
/// scale.
const MIN_MARGIN: f32 = 7.523_164e-37;

/// A body's shape, position and collision filter, as
/// [`CollisionWorld::body`] and [`CollisionWorld::iter`] report them.
///
/// ```
/// use quadrat::{Aabb, Body, CollisionWorld, Filter, Layers, Shape, Vec2};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let ball = Shape::Circle { radius: 1.0 };
/// let filter = Filter::on(Layers::bit(0)).colliding_with(Layers::bit(1));
/// let k = world.add(ball, [5.0, 5.0], filter, "ball");
/// let body: Body = world.body(k).unwrap();
/// assert_eq!(body, Body { shape: ball, position: Vec2::new(5.0, 5.0), filter });
/// assert_eq!(body.aabb(), Aabb::new([4.0, 4.0], [6.0, 6.0]));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Body {
    /// The shape, in local coordinates (centred on `position`).
    pub shape: Shape,
    /// Where the body is.
    pub position: Vec2,
    /// The layers the body is on and the layers it collides with.
    pub filter: Filter,
}

impl Body {
    /// The tight bounding box of the body's shape at its position.
    ///
    /// ```
    /// use quadrat::{Aabb, Body, Filter, Shape, Vec2};
    /// let body = Body { shape: Shape::Point, position: Vec2::new(1.0, 2.0), filter: Filter::ALL };
    /// assert_eq!(body.aabb(), Aabb::from_point([1.0, 2.0]));
    /// ```
    #[inline]
    #[must_use]
    pub fn aabb(&self) -> Aabb {
        self.shape.aabb(self.position)
    }

    /// `true` when this body and `other` pass each other's filter (see
    /// [`Filter::interacts`]).
    ///
    /// ```
    /// use quadrat::{Body, Filter, Layers, Shape, Vec2};
    /// const PLAYER: Layers = Layers::bit(0);
    /// const ENEMY: Layers = Layers::bit(1);
    /// const GHOST: Layers = Layers::bit(2);
    /// let at = |filter| Body { shape: Shape::Point, position: Vec2::ZERO, filter };
    /// let player = at(Filter::on(PLAYER).colliding_with(ENEMY | GHOST));
    /// let enemy = at(Filter::on(ENEMY).colliding_with(PLAYER));
    /// let ghost = at(Filter::on(GHOST).colliding_with(Layers::NONE)); // collides with nothing
    /// assert!(player.interacts(&enemy));
    /// assert!(!player.interacts(&ghost));
    /// ```
    #[inline]
    #[must_use]
    pub fn interacts(&self, other: &Body) -> bool {
        self.filter.interacts(other.filter)
    }
}

/// A set of bodies (a [`Shape`] at a position, a collision [`Filter`], and
/// a value of type `T`) that finds which of them touch, frame after frame,
/// and answers queries about them.
///
/// # Bodies
/// [`add`](CollisionWorld::add) returns a generational [`Key`]; after
/// [`remove`](CollisionWorld::remove) the key answers `None`/`false`
/// forever. Invalid input (a NaN or infinite position, an invalid shape) is
/// refused with an [`Error`] by the `try_*` methods, and with a panic by the
/// others, and changes nothing. [`add_many`](CollisionWorld::add_many) and
/// [`set_positions`](CollisionWorld::set_positions) add and move many
/// bodies at once, all or nothing, and faster than one by one when the
/// batch is large.
///
/// # Layers
/// Each body is on the [`Layers`] of its filter's `layer` and collides with
/// those of its `mask`. Two bodies interact when **each one's layer meets
/// the other's mask** ([`Filter::interacts`]):
///
/// ```text
/// a.layer ∩ b.mask ≠ ∅  and  b.layer ∩ a.mask ≠ ∅
/// ```
///
/// [`Filter::ALL`] interacts with every body that is on some layer and
/// collides with some layer; a mask of [`Layers::NONE`] interacts with
/// nothing. The filter is applied to each pair the broad phase reports,
/// before the exact test, by reading two entries of a dense array: pairs
/// filtered out cost almost nothing. The step's full pass skips whole runs
/// and subtrees of the tree whose or-ed layers and masks cannot interact (a
/// tile map on a layer that never meets itself is never paired with
/// itself). Queries take a `mask` of their own and find the bodies whose
/// `layer` meets it (`body.filter.layer.intersects(mask)`).
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
/// # Snapshots
/// With the `serde` feature a world serializes completely: its tree (values,
/// keys and layout), every body, the bodies changed since the last step and
/// that step's results. The restored world hands out the same keys next,
/// and every later step, event and query comes out exactly as the
/// original's, in the same order: what save games, replays and rollback
/// need. Reading a snapshot checks it in full (the tree as
/// [`QuadTree`]'s snapshots are, every body against its box in the tree,
/// and the contacts the next step would carry over against the exact test,
/// which costs about one full step) and refuses a damaged one with an
/// error.
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let ball = Shape::Circle { radius: 1.0 };
/// let a = world.add(ball, [10.0, 10.0], Filter::ALL, 1);
/// world.add(ball, [11.0, 10.0], Filter::ALL, 2);
/// world.step();
/// world.set_position(a, [30.0, 30.0]);
///
/// let saved = serde_json::to_string(&world).unwrap();
/// let mut restored: CollisionWorld<i32> = serde_json::from_str(&saved).unwrap();
/// assert_eq!(restored.step(), world.step()); // the same contacts and events
/// assert_eq!(
///     restored.add(ball, [1.0, 1.0], Filter::ALL, 3),
///     world.add(ball, [1.0, 1.0], Filter::ALL, 3), // the same next key
/// );
/// assert!(serde_json::from_str::<CollisionWorld<i32>>(&saved.replace("30.0", "31.0")).is_err());
/// # }
/// ```
///
/// ```
/// use quadrat::{Aabb, CollisionWorld, Filter, Shape, Vec2};
///
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let ball = Shape::Circle { radius: 1.0 };
/// let a = world.add(ball, [10.0, 10.0], Filter::ALL, "a");
/// let b = world.add(ball, [12.0, 10.0], Filter::ALL, "b"); // touching a
/// let c = world.add(ball, [50.0, 50.0], Filter::ALL, "c");
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
#[derive(Debug)]
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
    /// The scratch of [`try_set_positions`](CollisionWorld::try_set_positions):
    /// the batch of moves, kept between calls.
    pub(crate) moves: Vec<(Key, Vec2)>,
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
            moves: Vec::new(),
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// const ROCK: Layers = Layers::bit(2);
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 2.0 }, [5.0, 5.0], Filter::on(ROCK), "rock");
    /// assert_eq!(world[k], "rock");
    /// ```
    #[track_caller]
    pub fn add(
        &mut self,
        shape: Shape,
        position: impl Into<Vec2>,
        filter: Filter,
        value: T,
    ) -> Key {
        match self.try_add(shape, position, filter, value) {
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
    /// use quadrat::{Aabb, CollisionWorld, Error, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 1.0 };
    /// let err = world.try_add(ball, [f32::NAN, 0.0], Filter::ALL, ()).unwrap_err();
    /// assert_eq!(err.to_string(), "position.x is NaN");
    /// let err = world.try_add(Shape::Circle { radius: -1.0 }, [0.0, 0.0], Filter::ALL, ()).unwrap_err();
    /// assert_eq!(err, Error::Negative { field: "radius", value: -1.0 });
    /// assert!(world.is_empty());
    /// ```
    pub fn try_add(
        &mut self,
        shape: Shape,
        position: impl Into<Vec2>,
        filter: Filter,
        value: T,
    ) -> Result<Key, Error> {
        let pos = position.into();
        check_body(&shape, pos)?;
        let key = self.tree.try_insert(broad_box(&shape, pos), value)?;
        self.placed_at(key, shape, pos, filter);
        Ok(key)
    }

    /// Adds many bodies at once, `(shape, position, filter, value)` each,
    /// and returns their keys, in order: the keys a loop of
    /// [`add`](CollisionWorld::add) would have given, and the same bodies.
    ///
    /// A batch at least half as large as the world (and of more than 64
    /// bodies) is built into the broad phase in bulk (see
    /// [`QuadTree::insert_many`]), about twice as fast as adding one by
    /// one from 10,000 bodies; a smaller one is added one by one.
    ///
    /// # Panics
    /// When a body is invalid; the message gives its index in the batch and
    /// says why. Nothing is added then.
    /// [`try_add_many`](CollisionWorld::try_add_many) returns the error
    /// instead.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// const TILE: Layers = Layers::bit(0);
    /// const BALL: Layers = Layers::bit(1);
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let tile = Shape::Aabb { half_extents: [0.5, 0.5].into() };
    /// let tiles = world.add_many((0..100).map(|i| {
    ///     let at = [(i % 10) as f32 + 0.5, (i / 10) as f32 + 0.5];
    ///     (tile, at, Filter::on(TILE).colliding_with(BALL), i)
    /// }));
    /// assert_eq!(tiles.len(), 100);
    /// assert_eq!(world[tiles[42]], 42);
    /// world.add(Shape::Circle { radius: 0.25 }, [3.5, 4.5], Filter::on(BALL), 1000);
    /// assert_eq!(world.step().contacts.len(), 1); // tiles ignore tiles
    /// ```
    #[track_caller]
    pub fn add_many<P: Into<Vec2>>(
        &mut self,
        bodies: impl IntoIterator<Item = (Shape, P, Filter, T)>,
    ) -> Vec<Key> {
        match self.try_add_many(bodies) {
            Ok(keys) => keys,
            Err((i, e)) => {
                panic!("quadrat: invalid body #{i} passed to CollisionWorld::add_many: {e}")
            }
        }
    }

    /// Adds many bodies at once, like [`add_many`](CollisionWorld::add_many),
    /// or refuses the whole batch: the index of the first invalid body in
    /// it, and why ([`try_add`](CollisionWorld::try_add)'s checks). Reading
    /// stops at that body; nothing changes, not even the keys later adds
    /// will get, and the values read are dropped.
    ///
    /// Every body is read and checked before the world is touched: if the
    /// iterator panics, the world is exactly as before.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Error, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 1.0 };
    /// let bodies = vec![
    ///     (ball, [1.0, 1.0], Filter::ALL, 'a'),
    ///     (ball, [2.0, f32::NAN], Filter::ALL, 'b'),
    /// ];
    /// let (index, err) = world.try_add_many(bodies).unwrap_err();
    /// assert_eq!((index, err.to_string()), (1, "position.y is NaN".to_string()));
    /// assert!(world.is_empty());
    /// ```
    pub fn try_add_many<P: Into<Vec2>>(
        &mut self,
        bodies: impl IntoIterator<Item = (Shape, P, Filter, T)>,
    ) -> Result<Vec<Key>, (usize, Error)> {
        let bodies = bodies.into_iter();
        let expected = bodies.size_hint().0;
        let mut checked = Vec::with_capacity(expected);
        let mut values = Vec::with_capacity(expected);
        for (i, (shape, position, filter, value)) in bodies.enumerate() {
            let pos = position.into();
            check_body(&shape, pos).map_err(|e| (i, e))?;
            checked.push((shape, pos, filter));
            values.push(value);
        }
        // From here on no code of the caller's runs: the tree takes the
        // batch (exactly sized, so large ones go in bulk), then the bodies
        // their slots.
        let boxes = checked
            .iter()
            .map(|&(shape, pos, _)| broad_box(&shape, pos));
        let keys = self
            .tree
            .try_insert_many(boxes.zip(values))
            .expect("a body within range has a valid box");
        if let Some(last) = keys.iter().map(|k| k.index()).max() {
            self.grow_slots(last as usize);
        }
        for (&key, (shape, pos, filter)) in keys.iter().zip(checked) {
            self.placed_at(key, shape, pos, filter);
        }
        Ok(keys)
    }

    /// Makes the per-slot arrays reach slot `idx`.
    #[inline]
    fn grow_slots(&mut self, idx: usize) {
        if idx >= self.placed.len() {
            self.placed.resize(idx + 1, (Shape::Point, Vec2::ZERO));
            self.filters.resize(idx + 1, Filter::NONE);
            self.marked.resize(idx + 1, false);
        }
    }

    /// Records the body of a key just inserted into the tree, and lists it
    /// as changed.
    #[inline]
    fn placed_at(&mut self, key: Key, shape: Shape, pos: Vec2, filter: Filter) {
        let idx = key.index() as usize;
        self.grow_slots(idx);
        self.placed[idx] = (shape, pos);
        self.filters[idx] = filter;
        self.touch(idx);
    }

    /// Removes a body and returns its value; `None` for a stale key.
    ///
    /// Its contacts are reported as ended by the next
    /// [`step`](CollisionWorld::step).
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, "crate");
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
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
        if same_place(self.placed[idx].1, pos) {
            return Ok(()); // not a move: nothing to do, now or at the step
        }
        self.tree
            .try_update(key, broad_box(&self.placed[idx].0, pos))?;
        self.placed[idx].1 = pos;
        self.touch(idx);
        Ok(())
    }

    /// Moves many bodies at once, `(key, position)` each, as a loop of
    /// [`set_position`](CollisionWorld::set_position) would, and returns
    /// how many keys were live. Stale keys are skipped.
    ///
    /// When many bodies move (a quarter of the world or more), the broad
    /// phase is updated in one pass over all of them (see
    /// [`QuadTree::update_all`]); otherwise body by body. The pass pays
    /// most when bodies move far (leaving their nodes) in large worlds: at
    /// 100,000 bodies moving by their size it costs under half of the
    /// loop, for moves of a twentieth of that two thirds; for such small
    /// moves in a crowded world of 10,000 it can cost more than the loop.
    ///
    /// # Panics
    /// When a position is not finite or is beyond [`WORLD_LIMIT`]; the
    /// message gives its index in the batch and says why. Nothing moves
    /// then. [`try_set_positions`](CollisionWorld::try_set_positions)
    /// returns the error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = world.add_many((0..10).map(|i| (Shape::Point, [i as f32, 0.0], Filter::ALL, i)));
    /// world.step();
    /// // Everything falls one unit, and the keys come from the world itself.
    /// let moves: Vec<_> = world.iter().map(|(k, body, _)| (k, body.position + Vec2::new(0.0, 1.0))).collect();
    /// assert_eq!(world.set_positions(moves), 10);
    /// assert_eq!(world.position(keys[3]), Some(Vec2::new(3.0, 1.0)));
    /// assert_eq!(world.step().changed, 10);
    /// ```
    #[track_caller]
    pub fn set_positions<P: Into<Vec2>>(
        &mut self,
        moves: impl IntoIterator<Item = (Key, P)>,
    ) -> usize {
        match self.try_set_positions(moves) {
            Ok(live) => live,
            Err((i, e)) => panic!(
                "quadrat: invalid position #{i} passed to CollisionWorld::set_positions: {e}"
            ),
        }
    }

    /// Moves many bodies at once, like
    /// [`set_positions`](CollisionWorld::set_positions), or refuses the whole
    /// batch: the index of the first position that is not finite or is
    /// beyond [`WORLD_LIMIT`], and why. Every position is checked before
    /// anything moves, so on error nothing does; the check does not depend
    /// on the key (a stale key's position is checked too).
    ///
    /// Otherwise returns how many of the keys were live; stale keys are
    /// skipped. The moves apply in order: a key given twice ends at its
    /// last position. A body counts as changed at the next
    /// [`step`](CollisionWorld::step) exactly when the loop of
    /// `set_position` would have made it: a position with the same bits as
    /// the body's is no move.
    ///
    /// The batch is read in full before the world is touched, into a buffer
    /// the world keeps: if the iterator panics, the world is as before, and
    /// in the steady state a call allocates nothing.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
    /// let b = world.add(Shape::Point, [2.0, 2.0], Filter::ALL, ());
    /// world.remove(b);
    /// let moves = [(a, [5.0, 5.0]), (b, [6.0, 6.0])];
    /// assert_eq!(world.try_set_positions(moves), Ok(1)); // b is stale: skipped
    /// let err = world.try_set_positions([(a, [7.0, 7.0]), (a, [f32::NAN, 0.0])]).unwrap_err();
    /// assert_eq!((err.0, err.1.to_string()), (1, "position.x is NaN".to_string()));
    /// assert_eq!(world.position(a), Some(Vec2::new(5.0, 5.0))); // nothing moved
    /// ```
    pub fn try_set_positions<P: Into<Vec2>>(
        &mut self,
        moves: impl IntoIterator<Item = (Key, P)>,
    ) -> Result<usize, (usize, Error)> {
        let mut batch = core::mem::take(&mut self.moves);
        batch.clear();
        batch.extend(moves.into_iter().map(|(key, p)| (key, p.into())));
        let result = self.move_batch(&mut batch);
        self.moves = batch;
        result
    }

    /// The body of `try_set_positions`, once the caller's iterator has run:
    /// checks every position, moves the bodies, then the broad phase.
    fn move_batch(&mut self, batch: &mut [(Key, Vec2)]) -> Result<usize, (usize, Error)> {
        for (i, &(_, pos)) in batch.iter().enumerate() {
            check_position(pos).map_err(|e| (i, e))?;
        }
        // The bodies first, in order, as the loop of `set_position` would;
        // the moves that are moves are kept at the front of `batch`.
        let mut live = 0;
        let mut moved = 0;
        for i in 0..batch.len() {
            let (key, pos) = batch[i];
            if !self.tree.contains_key(key) {
                continue;
            }
            live += 1;
            let idx = key.index() as usize;
            if same_place(self.placed[idx].1, pos) {
                continue;
            }
            self.placed[idx].1 = pos;
            self.touch(idx);
            batch[moved] = (key, pos);
            moved += 1;
        }
        // Then the broad phase, to the bodies' final positions. Every body
        // moved here is marked changed, so only marked bodies can have a
        // box to update.
        let (placed, marked) = (&self.placed, &self.marked);
        let new_box = |key: Key| {
            let (shape, pos) = &placed[key.index() as usize];
            broad_box(shape, *pos)
        };
        if moved * BULK_MOVES >= self.tree.len() {
            self.tree
                .try_update_all(|key, _, old| {
                    if marked[key.index() as usize] {
                        new_box(key)
                    } else {
                        old
                    }
                })
                .expect("a body within range has a valid box");
        } else {
            for &(key, _) in &batch[..moved] {
                self.tree
                    .try_update(key, new_box(key))
                    .expect("a body within range has a valid box");
            }
        }
        Ok(live)
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 1.0 }, [1.0, 1.0], Filter::ALL, ());
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 1.0 };
    /// let k = world.add(ball, [1.0, 1.0], Filter::ALL, ());
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

    /// Sets the layers a body is on and those it collides with. Returns
    /// `false` for a stale key. Takes effect at the next
    /// [`step`](CollisionWorld::step) and in queries at once; setting the
    /// filter a body has is no change.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// const PLAYER: Layers = Layers::bit(0);
    /// const ENEMY: Layers = Layers::bit(1);
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], Filter::on(PLAYER).colliding_with(ENEMY), ());
    /// let b = world.add(Shape::Point, [1.0, 1.0], Filter::on(PLAYER).colliding_with(ENEMY), ());
    /// assert!(world.step().contacts.is_empty()); // players ignore players
    /// let enemy = Filter::on(ENEMY).colliding_with(PLAYER);
    /// assert!(world.set_filter(b, enemy));
    /// assert_eq!(world.filter(b), Some(enemy));
    /// assert_eq!(world.step().began[0].keys(), (a, b));
    /// ```
    pub fn set_filter(&mut self, key: Key, filter: Filter) -> bool {
        if !self.tree.contains_key(key) {
            return false;
        }
        let idx = key.index() as usize;
        if self.filters[idx] != filter {
            self.filters[idx] = filter;
            self.touch(idx);
        }
        true
    }

    /// Puts a body on the layers `layer`, keeping what it collides with.
    /// Returns `false` for a stale key. Takes effect at the next
    /// [`step`](CollisionWorld::step) and in queries at once.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let (a, b) = (Layers::bit(0), Layers::bit(1));
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], Filter::on(a), ());
    /// assert!(world.set_layer(k, b));
    /// assert_eq!(world.layer(k), Some(b));
    /// assert_eq!(world.pick([1.0, 1.0], a), vec![]);
    /// assert_eq!(world.pick([1.0, 1.0], b), vec![k]);
    /// ```
    pub fn set_layer(&mut self, key: Key, layer: Layers) -> bool {
        let Some(&Filter { mask, .. }) = self.filters.get(key.index() as usize) else {
            return false;
        };
        self.set_filter(key, Filter { layer, mask })
    }

    /// Sets the layers a body collides with, keeping those it is on.
    /// Returns `false` for a stale key. Takes effect at the next
    /// [`step`](CollisionWorld::step).
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
    /// let b = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
    /// assert_eq!(world.step().contacts.len(), 1);
    /// assert!(world.set_mask(b, Layers::NONE)); // b collides with nothing now
    /// assert_eq!(world.mask(b), Some(Layers::NONE));
    /// let events = world.step();
    /// assert!(events.contacts.is_empty());
    /// assert_eq!(events.ended, &[(a, b)]);
    /// ```
    pub fn set_mask(&mut self, key: Key, mask: Layers) -> bool {
        let Some(&Filter { layer, .. }) = self.filters.get(key.index() as usize) else {
            return false;
        };
        self.set_filter(key, Filter { layer, mask })
    }

    /// A body's shape, position and filter; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let filter = Filter::on(Layers::bit(2)).colliding_with(Layers::from_bits(0b110));
    /// let k = world.add(Shape::Point, [1.0, 2.0], filter, ());
    /// let body = world.body(k).unwrap();
    /// assert_eq!((body.shape, body.position, body.filter), (Shape::Point, Vec2::new(1.0, 2.0), filter));
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
        body_of(&self.placed, &self.filters, key)
    }

    /// A body's shape; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 2.0 }, [1.0, 2.0], Filter::ALL, ());
    /// assert_eq!(world.shape(k), Some(Shape::Circle { radius: 2.0 }));
    /// ```
    #[must_use]
    pub fn shape(&self, key: Key) -> Option<Shape> {
        self.body(key).map(|b| b.shape)
    }

    /// A body's position; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape, Vec2};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 2.0], Filter::ALL, ());
    /// assert_eq!(world.position(k), Some(Vec2::new(1.0, 2.0)));
    /// ```
    #[must_use]
    pub fn position(&self, key: Key) -> Option<Vec2> {
        self.body(key).map(|b| b.position)
    }

    /// A body's filter: the layers it is on and those it collides with;
    /// `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let filter = Filter::on(Layers::bit(1)).colliding_with(Layers::bit(0));
    /// let k = world.add(Shape::Point, [1.0, 2.0], filter, ());
    /// assert_eq!(world.filter(k), Some(filter));
    /// ```
    #[must_use]
    pub fn filter(&self, key: Key) -> Option<Filter> {
        self.body(key).map(|b| b.filter)
    }

    /// The layers a body is on; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// let (on, with) = (Layers::bit(2), Layers::bit(0) | Layers::bit(1));
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 2.0], Filter::on(on).colliding_with(with), ());
    /// assert_eq!((world.layer(k), world.mask(k)), (Some(on), Some(with)));
    /// ```
    #[must_use]
    pub fn layer(&self, key: Key) -> Option<Layers> {
        self.filter(key).map(|f| f.layer)
    }

    /// The layers a body collides with; `None` for a stale key.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 2.0], Filter::ALL, ());
    /// world.remove(k);
    /// assert_eq!(world.mask(k), None);
    /// ```
    #[must_use]
    pub fn mask(&self, key: Key) -> Option<Layers> {
        self.filter(key).map(|f| f.mask)
    }

    /// The tight bounding box of a body's shape; `None` for a stale key.
    /// (The box stored in [`tree`](CollisionWorld::tree) is this one grown
    /// by the broad phase's tiny margin.)
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 1.0 }, [5.0, 5.0], Filter::ALL, ());
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, 10);
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, String::from("crate"));
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// assert!(world.is_empty());
    /// world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// world.add(Shape::Point, [1.0, 1.0], Filter::ALL, 'a');
    /// world.add(Shape::Point, [2.0, 1.0], Filter::ALL, 'b');
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// world.add(Shape::Point, [1.0, 1.0], Filter::ALL, 1);
    /// for (_, body, hp) in world.iter_mut() {
    ///     *hp += body.position.x as i32;
    /// }
    /// assert_eq!(world.values().copied().collect::<Vec<_>>(), [2]);
    /// ```
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Key, Body, &mut T)> + '_ {
        let (placed, filters) = (&self.placed, &self.filters);
        self.tree
            .iter_mut()
            .map(move |(k, _, v)| (k, body_of(placed, filters, k), v))
    }

    /// The keys of all bodies, in order.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, "a");
    /// let b = world.add(Shape::Point, [2.0, 1.0], Filter::ALL, "b");
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
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
    /// let b = world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
    /// world.step();
    /// world.clear();
    /// assert!(world.is_empty() && !world.contains_key(a));
    /// assert_eq!(world.step().ended, &[(a, b)]);
    /// ```
    pub fn clear(&mut self) {
        // Marked first: a value whose destructor panics interrupts the
        // tree's `clear` after it has emptied the tree, and the next step
        // must still know that every body is gone.
        self.all_changed = true;
        self.tree.clear();
    }

    /// Makes room for at least `additional` more bodies, in the broad phase
    /// and in the world's own arrays, so that the next `additional` bodies
    /// added one by one into an empty world allocate nothing (its tree
    /// waits to place them; see [`QuadTree::reserve`] for a placed one).
    /// Adding bodies one at a time grows those arrays by doubling, and can
    /// leave up to half of them unused; reserving first allocates them once.
    /// The slots of removed bodies count as room: adds take them first.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// world.reserve(1000);
    /// for i in 0..1000 {
    ///     world.add(Shape::Point, [(i % 100) as f32, (i / 10) as f32], Filter::ALL, i);
    /// }
    /// assert_eq!(world.len(), 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.tree.reserve(additional);
        // One place per slot: adds take free slots first, so room is needed
        // only for the slots beyond them.
        let slots = self.tree.len().saturating_add(additional);
        let more = slots.saturating_sub(self.placed.len());
        self.placed.reserve(more);
        self.filters.reserve(more);
        self.marked.reserve(more);
        self.changed.reserve(additional);
    }

    /// Frees the memory the world holds beyond what its bodies need: the
    /// tree's (see [`QuadTree::shrink_to_fit`]), the unused room of the
    /// world's arrays, and the scratch its steps and batch moves keep for
    /// the next call. Bodies, keys, the last step's events and the next
    /// step's are unchanged; the next step allocates its scratch again.
    /// The per-body arrays keep one place per slot of the tree, free slots
    /// included: slots outlive their bodies (and
    /// [`clear`](CollisionWorld::clear)), and the next adds reuse them.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = world.add_many((0..1000).map(|i| {
    ///     (Shape::Circle { radius: 0.6 }, [(i % 100) as f32, (i / 10) as f32], Filter::ALL, i)
    /// }));
    /// let touching = world.step().contacts.len();
    /// for k in &keys[..900] {
    ///     world.remove(*k);
    /// }
    /// world.shrink_to_fit();
    /// assert_eq!(world.events().contacts.len(), touching);
    /// assert_eq!(world.len(), 100);
    /// assert_eq!(world.get(keys[950]), Some(&950));
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.tree.shrink_to_fit();
        self.placed.shrink_to_fit();
        self.filters.shrink_to_fit();
        self.marked.shrink_to_fit();
        self.changed.shrink_to_fit();
        self.moves = Vec::new();
        self.steps.shrink_to_fit();
    }

    /// The broad phase: every body's box (its shape's box grown by the tiny
    /// margin) with its value, for drawing the tree or asking it directly.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = world.add(Shape::Circle { radius: 1.0 }, [5.0, 5.0], Filter::ALL, ());
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

impl<T: Clone> Clone for CollisionWorld<T> {
    /// A copy of the world: its bodies, keys, broad phase and the last
    /// step's events, so that the copy's next step reports what the
    /// original's would; without the scratch that steps and batch moves
    /// keep for their next call (see [`QuadTree`]'s `clone`).
    fn clone(&self) -> CollisionWorld<T> {
        CollisionWorld {
            tree: self.tree.clone(),
            placed: self.placed.clone(),
            filters: self.filters.clone(),
            steps: self.steps.clone(),
            changed: self.changed.clone(),
            marked: self.marked.clone(),
            all_changed: self.all_changed,
            moves: Vec::new(),
        }
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

/// The body of live key `key`, from the per-slot arrays.
#[inline]
fn body_of(placed: &[(Shape, Vec2)], filters: &[Filter], key: Key) -> Body {
    let idx = key.index() as usize;
    let (shape, position) = placed[idx];
    Body {
        shape,
        position,
        filter: filters[idx],
    }
}

/// `true` when `a` and `b` have the same bits: moving a body there is no
/// move (and `-0.0` is a move from `0.0`).
#[inline]
fn same_place(a: Vec2, b: Vec2) -> bool {
    (a.x.to_bits(), a.y.to_bits()) == (b.x.to_bits(), b.y.to_bits())
}

/// A batch of moves updates the broad phase in one pass over every body
/// when at least one body in `BULK_MOVES` moved; below that, body by body.
const BULK_MOVES: usize = 4;

/// Checks a body: its position, then its shape.
pub(crate) fn check_body(shape: &Shape, pos: Vec2) -> Result<(), Error> {
    check_position(pos)?;
    check_shape(shape)
}

/// Refuses a non-finite position, naming the coordinate.
fn check_position(pos: Vec2) -> Result<(), Error> {
    // One branch for a position in range; NaN and the infinities fail the
    // test too, and the loops below say which coordinate and why.
    if (pos.x.abs() <= WORLD_LIMIT) & (pos.y.abs() <= WORLD_LIMIT) {
        return Ok(());
    }
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
