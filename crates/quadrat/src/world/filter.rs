//! Collision layers: [`Layers`], a set of up to 32 layers, and [`Filter`],
//! the layers a body is on and the layers it collides with.

use core::fmt;
use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

/// A set of collision layers, up to 32 of them (layer `i` is bit `i`).
///
/// A body is on some layers and collides with some layers (its
/// [`Filter`]); a query looks only for bodies on the layers of its mask.
/// Name the layers of a game once, as constants, and combine them with `|`:
///
/// ```
/// use quadrat::Layers;
/// const PLAYER: Layers = Layers::bit(0);
/// const ENEMY: Layers = Layers::bit(1);
/// const WALL: Layers = Layers::bit(2);
///
/// let solid = ENEMY | WALL;
/// assert!(solid.contains(WALL));
/// assert!(!solid.contains(PLAYER | WALL));
/// assert!(solid.intersects(PLAYER | WALL));
/// assert_eq!(solid & !WALL, ENEMY);
/// assert_eq!(solid.bits(), 0b110);
/// assert_eq!(format!("{solid:?}"), "Layers(0b110)");
/// assert_eq!(Layers::default(), Layers::NONE);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct Layers(u32);

impl Layers {
    /// No layer. A body on no layer is found by no query and interacts with
    /// no body; a body colliding with no layer interacts with no body.
    pub const NONE: Layers = Layers(0);

    /// All 32 layers.
    pub const ALL: Layers = Layers(u32::MAX);

    /// The single layer `i`, for `i` in `0..32`.
    ///
    /// # Panics
    /// When `i >= 32` (at compile time in a `const`).
    ///
    /// ```
    /// use quadrat::Layers;
    /// assert_eq!(Layers::bit(0).bits(), 1);
    /// assert_eq!(Layers::bit(31).bits(), 1 << 31);
    /// ```
    #[inline]
    #[must_use]
    #[track_caller]
    pub const fn bit(i: u32) -> Layers {
        assert!(i < 32, "quadrat: a layer's index must be below 32");
        Layers(1 << i)
    }

    /// The layers whose bits are set in `bits` (layer `i` is bit `i`).
    ///
    /// ```
    /// use quadrat::Layers;
    /// assert_eq!(Layers::from_bits(0b101), Layers::bit(0) | Layers::bit(2));
    /// assert_eq!(Layers::from_bits(u32::MAX), Layers::ALL);
    /// ```
    #[inline]
    #[must_use]
    pub const fn from_bits(bits: u32) -> Layers {
        Layers(bits)
    }

    /// The layers as bits (layer `i` is bit `i`).
    ///
    /// ```
    /// use quadrat::Layers;
    /// assert_eq!((Layers::bit(1) | Layers::bit(3)).bits(), 0b1010);
    /// ```
    #[inline]
    #[must_use]
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// `true` when the set holds no layer.
    ///
    /// ```
    /// use quadrat::Layers;
    /// assert!(Layers::NONE.is_empty());
    /// assert!(!Layers::bit(4).is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `true` when every layer of `other` is in this set (always, for an
    /// empty `other`).
    ///
    /// ```
    /// use quadrat::Layers;
    /// let (a, b) = (Layers::bit(0), Layers::bit(1));
    /// assert!((a | b).contains(a));
    /// assert!(!a.contains(a | b));
    /// assert!(a.contains(Layers::NONE));
    /// ```
    #[inline]
    #[must_use]
    pub const fn contains(self, other: Layers) -> bool {
        self.0 & other.0 == other.0
    }

    /// `true` when this set and `other` share at least one layer.
    ///
    /// ```
    /// use quadrat::Layers;
    /// let (a, b) = (Layers::bit(0), Layers::bit(1));
    /// assert!((a | b).intersects(b));
    /// assert!(!a.intersects(b));
    /// assert!(!Layers::ALL.intersects(Layers::NONE));
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn intersects(self, other: Layers) -> bool {
        self.0 & other.0 != 0
    }
}

impl fmt::Debug for Layers {
    /// `Layers(0b…)`: the bits in binary, layer 0 rightmost.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layers({:#b})", self.0)
    }
}

impl BitOr for Layers {
    type Output = Layers;
    /// The layers in either set.
    #[inline]
    fn bitor(self, rhs: Layers) -> Layers {
        Layers(self.0 | rhs.0)
    }
}

impl BitOrAssign for Layers {
    #[inline]
    fn bitor_assign(&mut self, rhs: Layers) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for Layers {
    type Output = Layers;
    /// The layers in both sets.
    #[inline]
    fn bitand(self, rhs: Layers) -> Layers {
        Layers(self.0 & rhs.0)
    }
}

impl BitAndAssign for Layers {
    #[inline]
    fn bitand_assign(&mut self, rhs: Layers) {
        self.0 &= rhs.0;
    }
}

impl Not for Layers {
    type Output = Layers;
    /// Every layer not in the set.
    #[inline]
    fn not(self) -> Layers {
        Layers(!self.0)
    }
}

/// Which bodies a body interacts with: the layers it is on (`layer`) and
/// the layers it collides with (`mask`).
///
/// Two bodies interact when **each one's layer meets the other's mask**
/// ([`interacts`](Filter::interacts)). The two fields have the same type,
/// so a filter is built by naming them, never by position: with
/// [`Filter::on`] and [`colliding_with`](Filter::colliding_with), or as a
/// struct literal.
///
/// ```
/// use quadrat::{Filter, Layers};
/// const PLAYER: Layers = Layers::bit(0);
/// const ENEMY: Layers = Layers::bit(1);
/// const WALL: Layers = Layers::bit(2);
///
/// let player = Filter::on(PLAYER).colliding_with(ENEMY | WALL);
/// let enemy = Filter::on(ENEMY).colliding_with(PLAYER | WALL);
/// let wall = Filter { layer: WALL, mask: PLAYER | ENEMY };
/// let ghost = Filter::on(ENEMY).colliding_with(Layers::NONE);
/// assert!(player.interacts(enemy) && player.interacts(wall) && enemy.interacts(wall));
/// assert!(!wall.interacts(wall));
/// assert!(!ghost.interacts(player)); // the player would, the ghost does not
/// ```
///
/// The default filter is [`Filter::ALL`]: on every layer, colliding with
/// every layer, as a body of a game that never names a layer should be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Filter {
    /// The layers the body is on: queries whose mask meets them find it.
    pub layer: Layers,
    /// The layers the body collides with.
    pub mask: Layers,
}

impl Filter {
    /// On every layer, colliding with every layer: interacts with every
    /// body that is on some layer and collides with some layer. The
    /// [`Default`].
    ///
    /// ```
    /// use quadrat::{Filter, Layers};
    /// assert_eq!(Filter::ALL, Filter { layer: Layers::ALL, mask: Layers::ALL });
    /// assert_eq!(Filter::default(), Filter::ALL);
    /// assert!(Filter::ALL.interacts(Filter::on(Layers::bit(7)).colliding_with(Layers::bit(0))));
    /// ```
    pub const ALL: Filter = Filter {
        layer: Layers::ALL,
        mask: Layers::ALL,
    };

    /// On no layer, colliding with none: interacts with nothing and is
    /// found by no query.
    ///
    /// ```
    /// use quadrat::Filter;
    /// assert!(!Filter::NONE.interacts(Filter::ALL));
    /// ```
    pub const NONE: Filter = Filter {
        layer: Layers::NONE,
        mask: Layers::NONE,
    };

    /// On the layers `layer`, colliding with every layer; narrow what it
    /// collides with by [`colliding_with`](Filter::colliding_with).
    ///
    /// ```
    /// use quadrat::{Filter, Layers};
    /// const CRATE: Layers = Layers::bit(3);
    /// assert_eq!(Filter::on(CRATE), Filter { layer: CRATE, mask: Layers::ALL });
    /// ```
    #[inline]
    #[must_use]
    pub const fn on(layer: Layers) -> Filter {
        Filter {
            layer,
            mask: Layers::ALL,
        }
    }

    /// The same layers, colliding with the layers `mask` (instead of what
    /// it collided with).
    ///
    /// ```
    /// use quadrat::{Filter, Layers};
    /// const BULLET: Layers = Layers::bit(4);
    /// const CRATE: Layers = Layers::bit(3);
    /// let bullet = Filter::on(BULLET).colliding_with(CRATE);
    /// assert_eq!((bullet.layer, bullet.mask), (BULLET, CRATE));
    /// ```
    #[inline]
    #[must_use]
    pub const fn colliding_with(self, mask: Layers) -> Filter {
        Filter {
            layer: self.layer,
            mask,
        }
    }

    /// The layer rule: `true` when each filter's layer meets the other's
    /// mask, `self.layer ∩ other.mask ≠ ∅ && other.layer ∩ self.mask ≠ ∅`.
    /// Symmetric.
    ///
    /// ```
    /// use quadrat::{Filter, Layers};
    /// let a = Filter::on(Layers::bit(0)).colliding_with(Layers::bit(1));
    /// let b = Filter::on(Layers::bit(1)).colliding_with(Layers::bit(0));
    /// let c = Filter::on(Layers::bit(1)).colliding_with(Layers::bit(1));
    /// assert!(a.interacts(b) && b.interacts(a));
    /// assert!(!a.interacts(c)); // c's mask misses a's layer
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn interacts(self, other: Filter) -> bool {
        self.layer.intersects(other.mask) && other.layer.intersects(self.mask)
    }
}

impl Default for Filter {
    /// [`Filter::ALL`].
    #[inline]
    fn default() -> Filter {
        Filter::ALL
    }
}

impl Filter {
    /// Both filters' layers and masks or-ed: a group's union interacts with
    /// another's whenever any member of one interacts with any member of
    /// the other.
    #[inline(always)]
    pub(crate) fn union(self, other: Filter) -> Filter {
        Filter {
            layer: self.layer | other.layer,
            mask: self.mask | other.mask,
        }
    }
}
