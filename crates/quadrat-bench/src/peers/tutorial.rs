//! The quadtree from the classic "use quadtrees to detect likely collisions
//! in 2D space" tutorial, written the way the Java original is.
//!
//! Each node holds a `Vec` of objects and optionally four boxed children. An
//! object goes into a child only when it fits strictly inside one quadrant
//! (the original `getIndex`); objects that straddle a midline stay in the
//! node. A node splits when it holds more than [`MAX_OBJECTS`] objects, down
//! to [`MAX_LEVELS`], moving its objects down with `Vec::remove` as the
//! original does with `ArrayList.remove`. `retrieve` returns the objects of
//! every node on the path an object would be inserted along. All pairs:
//! `retrieve` for each object, then the exact box test. Moving frame: clear
//! and re-insert everything, the tutorial's per-frame use.
//!
//! Differences from the original, all needed for exact results:
//!
//! * the root covers the bounding box of the input (the original uses a fixed
//!   screen rectangle, which degrades to a list for objects outside it);
//! * node bounds are `f32` (the original truncates half-sizes to `int`);
//! * all pairs normalizes each candidate pair to `(min, max)` and removes
//!   duplicates by sorting. A bare "keep only `j > i`" filter would be wrong:
//!   a pair is found only from the deeper of the two objects when they are
//!   stored at different depths;
//! * external range queries use `Node::retrieve_overlapping`, which also
//!   descends into children when the query straddles a midline. The original
//!   `retrieve` stops there and misses objects stored below.

use super::{Bbox, BroadPhase, bounds, intersects, ordered};

/// A node splits when it holds more than this many objects.
const MAX_OBJECTS: usize = 10;
/// Nodes at this level never split (the root is level 0).
const MAX_LEVELS: u32 = 5;

/// Node rectangle as `x, y, width, height`, like `java.awt.Rectangle`.
#[derive(Clone, Copy, Debug)]
struct Rect {
    x: f32,
    y: f32,
    w: f32,
    h: f32,
}

/// One quadtree node.
#[derive(Debug)]
struct Node {
    level: u32,
    bounds: Rect,
    objects: Vec<u32>,
    nodes: Option<Box<[Node; 4]>>,
}

impl Node {
    fn new(level: u32, bounds: Rect) -> Self {
        Self {
            level,
            bounds,
            objects: Vec::new(),
            nodes: None,
        }
    }

    /// Removes all objects and children.
    fn clear(&mut self) {
        self.objects.clear();
        self.nodes = None;
    }

    /// Creates the four children: 0 top-right, 1 top-left, 2 bottom-left,
    /// 3 bottom-right (y grows downwards, as on screen).
    fn split(&mut self) {
        let sub_w = self.bounds.w / 2.0;
        let sub_h = self.bounds.h / 2.0;
        let Rect { x, y, .. } = self.bounds;
        let level = self.level + 1;
        let r = |x, y| Rect {
            x,
            y,
            w: sub_w,
            h: sub_h,
        };
        self.nodes = Some(Box::new([
            Node::new(level, r(x + sub_w, y)),
            Node::new(level, r(x, y)),
            Node::new(level, r(x, y + sub_h)),
            Node::new(level, r(x + sub_w, y + sub_h)),
        ]));
    }

    /// The child quadrant `r` fits in strictly, or `None` if it straddles a
    /// midline.
    fn index(&self, r: &Bbox) -> Option<usize> {
        let vertical_midpoint = self.bounds.x + self.bounds.w / 2.0;
        let horizontal_midpoint = self.bounds.y + self.bounds.h / 2.0;
        let top = r[1] < horizontal_midpoint && r[3] < horizontal_midpoint;
        let bottom = r[1] > horizontal_midpoint;
        if r[0] < vertical_midpoint && r[2] < vertical_midpoint {
            if top {
                return Some(1);
            } else if bottom {
                return Some(2);
            }
        } else if r[0] > vertical_midpoint {
            if top {
                return Some(0);
            } else if bottom {
                return Some(3);
            }
        }
        None
    }

    /// Inserts object `id`, whose box is `boxes[id]`.
    fn insert(&mut self, id: u32, boxes: &[Bbox]) {
        if let Some(i) = self.index(&boxes[id as usize])
            && let Some(nodes) = &mut self.nodes
        {
            nodes[i].insert(id, boxes);
            return;
        }
        self.objects.push(id);
        if self.objects.len() > MAX_OBJECTS && self.level < MAX_LEVELS {
            if self.nodes.is_none() {
                self.split();
            }
            let mut i = 0;
            while i < self.objects.len() {
                match self.index(&boxes[self.objects[i] as usize]) {
                    Some(q) => {
                        let moved = self.objects.remove(i);
                        self.nodes.as_mut().expect("split above")[q].insert(moved, boxes);
                    }
                    None => i += 1,
                }
            }
        }
    }

    /// Appends the objects of every node on `r`'s insertion path.
    ///
    /// Over all inserted objects this finds every colliding pair: two
    /// intersecting objects cannot sit in different quadrants of a node, so
    /// one is stored on the other's path, and the deeper one retrieves it.
    fn retrieve(&self, out: &mut Vec<u32>, r: &Bbox) {
        if let Some(nodes) = &self.nodes
            && let Some(i) = self.index(r)
        {
            nodes[i].retrieve(out, r);
        }
        out.extend_from_slice(&self.objects);
    }

    /// Appends the objects of every node whose objects may intersect `r`.
    ///
    /// Unlike `Node::retrieve`, when `r` straddles a midline this descends
    /// into each side `r` reaches. Objects in the children lie strictly on
    /// one side of the midlines, so the side tests are exact.
    fn retrieve_overlapping(&self, out: &mut Vec<u32>, r: &Bbox) {
        out.extend_from_slice(&self.objects);
        let Some(nodes) = &self.nodes else {
            return;
        };
        let vertical_midpoint = self.bounds.x + self.bounds.w / 2.0;
        let horizontal_midpoint = self.bounds.y + self.bounds.h / 2.0;
        let left = r[0] < vertical_midpoint;
        let right = r[2] > vertical_midpoint;
        let top = r[1] < horizontal_midpoint;
        let bottom = r[3] > horizontal_midpoint;
        for (i, reached) in [right && top, left && top, left && bottom, right && bottom]
            .into_iter()
            .enumerate()
        {
            if reached {
                nodes[i].retrieve_overlapping(out, r);
            }
        }
    }
}

/// The tutorial quadtree plus the boxes its objects refer to.
#[derive(Debug)]
pub struct TutorialQuadtree {
    boxes: Vec<Bbox>,
    root: Node,
    candidates: Vec<u32>,
    found: Vec<(u32, u32)>,
}

impl TutorialQuadtree {
    /// Clears the tree, sets the world to the bounding box of the current
    /// boxes and inserts every box.
    fn rebuild(&mut self) {
        let world = bounds(&self.boxes).unwrap_or_default();
        self.root.clear();
        self.root.bounds = Rect {
            x: world[0],
            y: world[1],
            w: world[2] - world[0],
            h: world[3] - world[1],
        };
        for id in 0..self.boxes.len() as u32 {
            self.root.insert(id, &self.boxes);
        }
    }
}

impl BroadPhase for TutorialQuadtree {
    const NAME: &'static str = "tutorial-quadtree";

    /// Ignores `world`: the root covers the bounding box of the input.
    fn build(_world: Bbox, boxes: &[Bbox]) -> Self {
        let mut tree = Self {
            boxes: boxes.to_vec(),
            root: Node::new(
                0,
                Rect {
                    x: 0.0,
                    y: 0.0,
                    w: 0.0,
                    h: 0.0,
                },
            ),
            candidates: Vec::new(),
            found: Vec::new(),
        };
        tree.rebuild();
        tree
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        self.found.clear();
        for (i, a) in self.boxes.iter().enumerate() {
            self.candidates.clear();
            self.root.retrieve(&mut self.candidates, a);
            for &j in &self.candidates {
                if j as usize != i && intersects(a, &self.boxes[j as usize]) {
                    self.found.push(ordered(i as u32, j));
                }
            }
        }
        self.found.sort_unstable();
        self.found.dedup();
        out.extend_from_slice(&self.found);
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        self.candidates.clear();
        self.root.retrieve_overlapping(&mut self.candidates, &area);
        out.extend(
            self.candidates
                .iter()
                .filter(|&&j| intersects(&area, &self.boxes[j as usize])),
        );
    }

    /// Clears and re-inserts everything each frame, as the tutorial does.
    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        self.boxes.clear();
        self.boxes.extend_from_slice(boxes);
        self.rebuild();
    }
}
