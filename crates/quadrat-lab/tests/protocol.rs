//! The page's messages (parsing and checking, good and bad) and the binary
//! frames (decode what was encoded).

use quadrat::scenario::Layout;
use quadrat::{Aabb, MAX_DEPTH, Vec2};
use quadrat_lab::serve::frame::{self, Decoder, Encoder, FrameInfo, Header};
use quadrat_lab::serve::protocol::{Command, Reply, SettingsUpdate, parse};
use quadrat_lab::sim::{
    BroadPhase, LEVEL_SPEED_MAX, MAX_COUNT, Marks, Scene, Settings, Simulation, TILES_MAX, WORLD,
};

#[test]
fn good_messages_parse_to_commands() {
    let cases = [
        (r#"{"type":"pause","paused":true}"#, Command::Pause(true)),
        (r#"{"type":"pause","paused":false}"#, Command::Pause(false)),
        (r#"{"type":"step"}"#, Command::Step),
        (
            r#"{"type":"player","dx":1,"dy":-0.5}"#,
            Command::Player(Vec2::new(1.0, -0.5)),
        ),
        (
            r#"{"type":"query","rect":[300,400,100,50.5]}"#,
            Command::Query(Some(Aabb::new([100.0, 50.5], [300.0, 400.0]))),
        ),
        (r#"{"type":"query","rect":null}"#, Command::Query(None)),
        (
            r#"{"type":"pick","at":[12.5,-3]}"#,
            Command::Pick(Some(Vec2::new(12.5, -3.0))),
        ),
        (r#"{"type":"pick","at":null}"#, Command::Pick(None)),
        (
            r#"{"type":"settings"}"#,
            Command::Settings(SettingsUpdate::default()),
        ),
        (
            r#" { "seed": 7, "type": "settings", "count": 10 } "#,
            Command::Settings(SettingsUpdate {
                count: Some(10),
                seed: Some(7),
                ..SettingsUpdate::default()
            }),
        ),
        (
            r#"{"type":"settings","count":100000,"size":0.1,"speed":20,"scene":"clustered",
                "max_items":1024,"max_depth":24,"broad_phase":"brute_force","seed":18446744073709551615}"#,
            Command::Settings(SettingsUpdate {
                count: Some(100_000),
                size: Some(0.1),
                speed: Some(20.0),
                scene: Some(Scene::Objects(Layout::Clustered)),
                tiles: None,
                max_items: Some(1024),
                max_depth: Some(MAX_DEPTH),
                broad_phase: Some(BroadPhase::BruteForce),
                seed: Some(u64::MAX),
            }),
        ),
        (
            r#"{"type":"settings","scene":"level","tiles":1000000}"#,
            Command::Settings(SettingsUpdate {
                scene: Some(Scene::Level),
                tiles: Some(1_000_000),
                ..SettingsUpdate::default()
            }),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(text), Ok(expected), "{text}");
    }
}

#[test]
fn every_kind_of_bad_message_is_refused_with_a_reason() {
    let cases = [
        // Not JSON, not an object, no type, unknown type.
        ("", "EOF"),
        ("{", "EOF"),
        ("hello", "expected value"),
        ("[1,2]", "invalid type"),
        ("42", "invalid type"),
        (r#"{"paused":true}"#, "missing field `type`"),
        (r#"{"type":"fly"}"#, "unknown variant `fly`"),
        (r#"{"type":7}"#, "invalid type"),
        // Unknown and missing fields.
        (
            r#"{"type":"settings","colour":"red"}"#,
            "unknown field `colour`",
        ),
        (r#"{"type":"pause"}"#, "missing field `paused`"),
        (r#"{"type":"player","dx":1}"#, "missing field `dy`"),
        // Wrong field types.
        (
            r#"{"type":"settings","count":"many"}"#,
            "invalid type: string",
        ),
        (
            r#"{"type":"settings","count":12.5}"#,
            "invalid type: floating point",
        ),
        (
            r#"{"type":"settings","count":true}"#,
            "invalid type: boolean",
        ),
        (
            r#"{"type":"settings","size":"big"}"#,
            "invalid type: string",
        ),
        (r#"{"type":"settings","scene":3}"#, "invalid type: integer"),
        (r#"{"type":"pause","paused":"yes"}"#, "invalid type: string"),
        (r#"{"type":"query","rect":[1,2,3]}"#, "invalid length 3"),
        (r#"{"type":"query","rect":"all"}"#, "invalid type: string"),
        (r#"{"type":"pick","at":[1,"2"]}"#, "invalid type: string"),
        // Null where a value is needed (what JSON.stringify makes of NaN).
        (r#"{"type":"settings","size":null}"#, "invalid type: null"),
        (r#"{"type":"settings","count":null}"#, "invalid type: null"),
        (
            r#"{"type":"player","dx":null,"dy":0}"#,
            "invalid type: null",
        ),
        // NaN and infinities are not JSON at all.
        (r#"{"type":"settings","size":NaN}"#, "expected value"),
        (r#"{"type":"settings","speed":Infinity}"#, "expected value"),
        (r#"{"type":"settings","size":1e999}"#, "number out of range"),
        // Out of range.
        (
            r#"{"type":"settings","count":1000000000}"#,
            "count must be between 10 and 100,000 (got 1,000,000,000)",
        ),
        (
            r#"{"type":"settings","count":9}"#,
            "count must be between 10 and 100,000",
        ),
        (
            r#"{"type":"settings","count":-5}"#,
            "invalid value: integer `-5`",
        ),
        (
            r#"{"type":"settings","size":-1}"#,
            "size must be between 0.1 and 10 (got -1)",
        ),
        (r#"{"type":"settings","size":0}"#, "size must be between"),
        (
            r#"{"type":"settings","speed":21}"#,
            "speed must be between 0 and 20",
        ),
        (
            r#"{"type":"settings","max_items":0}"#,
            "max_items must be between 1 and 1,024 (got 0)",
        ),
        (
            r#"{"type":"settings","max_items":5000}"#,
            "max_items must be between",
        ),
        (
            r#"{"type":"settings","max_depth":25}"#,
            "max_depth must be between 0 and 24 (got 25)",
        ),
        (
            r#"{"type":"settings","max_depth":300}"#,
            "max_depth must be between",
        ),
        (r#"{"type":"settings","seed":-1}"#, "invalid value"),
        (
            r#"{"type":"settings","scene":"spiral"}"#,
            "unknown scene `spiral`",
        ),
        (
            r#"{"type":"settings","broad_phase":"octree"}"#,
            "unknown broad_phase `octree`",
        ),
        (
            r#"{"type":"player","dx":2,"dy":0}"#,
            "dx must be between -1 and 1 (got 2)",
        ),
        (
            r#"{"type":"player","dx":0,"dy":-1.5}"#,
            "dy must be between -1 and 1",
        ),
        (
            r#"{"type":"query","rect":[0,0,1e7,5]}"#,
            "rect[2] must be between",
        ),
        (
            r#"{"type":"pick","at":[0,-1e300]}"#,
            "at[1] must be between",
        ),
    ];
    for (text, reason) in cases {
        let err = parse(text).expect_err(text);
        assert!(
            err.contains(reason),
            "{text}: {err:?} does not say {reason:?}"
        );
    }
}

#[test]
fn settings_are_checked_against_each_other_by_the_simulation() {
    let mut sim = Simulation::new(Settings {
        count: 6_000,
        ..Settings::default()
    })
    .unwrap();
    let Ok(Command::Settings(update)) = parse(r#"{"type":"settings","broad_phase":"brute_force"}"#)
    else {
        panic!("a valid message");
    };
    let err = sim.apply(update.apply_to(sim.settings())).unwrap_err();
    assert!(
        err.contains("brute force is limited to 5,000 objects"),
        "{err}"
    );
    assert_eq!(sim.settings().broad_phase, BroadPhase::Quadtree);
}

#[test]
fn the_level_refuses_a_tree_too_shallow_for_its_bodies() {
    let mut sim = Simulation::new(Settings {
        count: 100,
        tiles: 1_000,
        scene: Scene::Level,
        ..Settings::default()
    })
    .unwrap();
    let Ok(Command::Settings(update)) = parse(
        r#"{"type":"settings","scene":"level","count":20000,"tiles":200000,"max_depth":0,"max_items":1024}"#,
    ) else {
        panic!("a valid message");
    };
    let before = sim.settings();
    let err = sim.apply(update.apply_to(before)).unwrap_err();
    assert!(
        err.starts_with("the level's 220,001 bodies need max_depth 3 or more"),
        "{err}"
    );
    assert_eq!(sim.settings(), before);
    // Each depth takes four times the bodies of the one above it.
    let level = |count, tiles, max_depth| Settings {
        scene: Scene::Level,
        count,
        tiles,
        max_depth,
        ..Settings::default()
    };
    assert!(level(4_000, 999, 0).validate().is_ok());
    assert!(level(4_000, 1_000, 0).validate().is_err());
    assert!(level(20_000, 1_000_000, 3).validate().is_err());
    // The largest level, at the depth it needs, and the defaults.
    assert!(level(MAX_COUNT, TILES_MAX, 4).validate().is_ok());
    assert!(
        level(1_000, 20_000, Settings::default().max_depth)
            .validate()
            .is_ok()
    );
    // The objects scene's tree is not held to it.
    let flat = Settings {
        count: 20_000,
        max_depth: 0,
        ..Settings::default()
    };
    assert!(flat.validate().is_ok());
}

#[test]
fn the_level_refuses_movers_too_many_or_too_large_to_touch_in_bounds() {
    let level = |count: usize, size: f32| Settings {
        scene: Scene::Level,
        count,
        size,
        tiles: 1_000,
        ..Settings::default()
    };
    // count × size at most 100,000: the most movers at size 1, or a tenth
    // of them at size 10.
    assert!(level(MAX_COUNT, 1.0).validate().is_ok());
    assert!(level(10_000, 10.0).validate().is_ok());
    let err = level(10_001, 10.0).validate().unwrap_err();
    assert!(
        err.starts_with("the level's 10,001 movers at size 10 would touch about 1,571,1"),
        "{err}"
    );
    assert!(level(MAX_COUNT, 1.01).validate().is_err());
    // The level's movers go at most at speed 5; the object scenes' at 20.
    assert!(
        Settings {
            speed: LEVEL_SPEED_MAX,
            ..level(1_000, 1.0)
        }
        .validate()
        .is_ok()
    );
    let err = Settings {
        speed: 5.5,
        ..level(1_000, 1.0)
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        err,
        "the level's movers go at most speed 5 (got 5.5): faster, they sink into the walls' \
         tiles within a tick and touch thousands of them; lower the speed"
    );
    assert!(
        Settings {
            speed: 20.0,
            ..Settings::default()
        }
        .validate()
        .is_ok()
    );
    // The objects scenes are not held to it: their boxes shrink as they
    // grow in number.
    assert!(
        Settings {
            count: MAX_COUNT,
            size: 10.0,
            ..Settings::default()
        }
        .validate()
        .is_ok()
    );
    // A refused change leaves the simulation as it was.
    let mut sim = Simulation::new(level(1_000, 1.0)).unwrap();
    assert!(sim.apply(level(20_000, 10.0)).is_err());
    assert_eq!(sim.settings(), level(1_000, 1.0));
}

#[test]
fn minus_zero_is_taken_as_zero() {
    let Ok(Command::Settings(update)) = parse(r#"{"type":"settings","speed":-0.0,"size":1}"#)
    else {
        panic!("refused");
    };
    let speed = update.speed.unwrap();
    assert_eq!(speed.to_bits(), 0, "{speed}");
    let settings = update.apply_to(Settings::default());
    let echoed: serde_json::Value = serde_json::from_str(
        &Reply::Settings {
            settings: settings.into(),
        }
        .to_json(),
    )
    .unwrap();
    assert_eq!(echoed["settings"]["speed"].to_string(), "0.0");
    let Ok(Command::Player(d)) = parse(r#"{"type":"player","dx":-0,"dy":-0.0}"#) else {
        panic!("refused");
    };
    assert_eq!((d.x.to_bits(), d.y.to_bits()), (0, 0));
    let Ok(Command::Pick(Some(at))) = parse(r#"{"type":"pick","at":[-0.0,5]}"#) else {
        panic!("refused");
    };
    assert_eq!(at.x.to_bits(), 0);
}

#[test]
fn replies_are_tagged_json() {
    let hello: serde_json::Value =
        serde_json::from_str(&Reply::hello(Settings::default()).to_json()).unwrap();
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["world"], f64::from(WORLD));
    assert_eq!(hello["settings"]["count"], Settings::default().count);
    assert_eq!(hello["settings"]["scene"], "uniform");
    assert_eq!(hello["settings"]["broad_phase"], "quadtree");
    assert_eq!(hello["limits"]["count_max"], 100_000);
    assert_eq!(hello["limits"]["max_depth"], MAX_DEPTH);
    let error: serde_json::Value = serde_json::from_str(
        &Reply::Error {
            message: "no \"quotes\" lost".to_owned(),
        }
        .to_json(),
    )
    .unwrap();
    assert_eq!(
        error,
        serde_json::json!({"type": "error", "message": "no \"quotes\" lost"})
    );
}

fn ticked(settings: Settings) -> Simulation {
    let mut sim = Simulation::new(settings).unwrap();
    sim.set_query(Some(Aabb::new([200.0, 150.0], [640.0, 500.0])));
    sim.set_player_direction(Vec2::new(-1.0, 1.0));
    sim.tick(true);
    sim.pick(Some(Vec2::new(700.0, 700.0)));
    sim.tick(true);
    sim
}

#[test]
fn frames_decode_to_what_was_encoded() {
    let sim = ticked(Settings {
        count: 3_000,
        scene: Scene::Objects(Layout::MixedSizes),
        ..Settings::default()
    });
    let info = FrameInfo {
        frame: 77,
        paused: true,
        sim_fps: 59.5,
        dropped: 3,
    };
    let mut bytes = Vec::new();
    frame::encode(&sim, info, &mut bytes);
    let decoded = frame::decode(&bytes).unwrap();
    let h = decoded.header;
    let figures = sim.figures();
    let leaves: Vec<_> = sim.tree().nodes().filter(|n| n.is_leaf).collect();
    let (picked, distance) = sim.picked().unwrap();

    assert_eq!(
        (h.frame, h.count, h.sent, h.leaves, h.nodes, h.depth),
        (
            77,
            3_000,
            3_001,
            leaves.len() as u32,
            figures.nodes,
            sim.tree().depth()
        )
    );
    assert_eq!(h.flags, Header::PAUSED | Header::QUERY | Header::PICKED);
    assert_eq!(
        h.sections,
        Header::KEY | Header::SIZES | Header::TREE,
        "a first frame is a key frame"
    );
    assert_eq!(
        (h.pairs, h.checks, h.candidates, h.colliding),
        (
            figures.pairs,
            figures.checks,
            figures.candidates,
            figures.colliding
        )
    );
    assert_eq!(
        (h.query_hits, h.player_candidates, h.player_contacts),
        (
            figures.query_hits,
            figures.player_candidates,
            figures.player_contacts
        )
    );
    assert_eq!((h.picked, h.picked_distance), (picked, distance));
    assert_eq!(h.update_ms, figures.update.as_secs_f32() * 1e3);
    assert_eq!(h.pairs_ms, figures.pair_time.as_secs_f32() * 1e3);
    assert_eq!((h.sim_fps, h.player, h.dropped), (59.5, sim.player(), 3));
    let compare = figures.compare;
    assert_eq!(
        (
            h.tree_tests,
            h.tree_bound_tests,
            h.sweep_tests,
            h.brute_tests
        ),
        (
            compare.tree.box_tests,
            compare.tree.bound_tests,
            compare.sweep_tests,
            compare.brute_tests
        )
    );
    assert_eq!(h.exact_ms, figures.exact_time.as_secs_f32() * 1e3);

    // Positions and sizes within half a quantization step; marks exact.
    let step = WORLD / 65535.0;
    for (i, object) in decoded.objects.iter().enumerate() {
        let (p, b) = (sim.positions()[i], sim.shapes()[i].aabb(sim.positions()[i]));
        assert!(
            (object.center - p).length() <= step,
            "{i}: {object:?} vs {p:?}"
        );
        assert!((object.half.x - b.width() / 2.0).abs() <= step);
        assert!((object.half.y - b.height() / 2.0).abs() <= step);
        assert_eq!(object.marks, sim.marks()[i]);
    }
    // The leaves: the same cells (from the tree's shape alone), depths and
    // item counts.
    assert_eq!(decoded.leaves.len(), leaves.len());
    for (got, want) in decoded.leaves.iter().zip(&leaves) {
        assert_eq!(got.cell, want.bounds);
        assert_eq!((got.depth, got.items as usize), (want.depth, want.items));
    }

    // The marks say what the header counts.
    let count = |bit| decoded.objects.iter().filter(|o| o.marks.has(bit)).count() as u32;
    assert_eq!(count(Marks::IN_QUERY), h.query_hits);
    assert_eq!(count(Marks::CANDIDATE), h.player_candidates);
    assert_eq!(count(Marks::CONTACT), h.player_contacts);
    assert_eq!(count(Marks::COLLIDING), h.colliding);
    assert_eq!(count(Marks::PLAYER), 1);
    assert_eq!(count(Marks::PICKED), 1);
    assert!(
        decoded
            .objects
            .last()
            .unwrap()
            .marks
            .has(Marks::PLAYER | Marks::BOX)
    );
    assert!(h.query_hits > 0 && h.pairs > 0);
}

/// Runs `sim` for `ticks`, changing it with `change` on the way, and checks
/// that every frame coded against the one before decodes to exactly what
/// a key frame of the same tick decodes to. Returns the key and delta
/// frames' total sizes.
fn check_deltas(
    sim: &mut Simulation,
    ticks: u32,
    mut change: impl FnMut(u32, &mut Simulation),
) -> (usize, usize) {
    let (mut encoder, mut decoder) = (Encoder::new(), Decoder::new());
    let (mut key_bytes, mut delta_bytes) = (0, 0);
    let (mut bytes, mut key) = (Vec::new(), Vec::new());
    for t in 1..=ticks {
        change(t, sim);
        sim.tick(true);
        let info = FrameInfo {
            frame: t,
            ..FrameInfo::default()
        };
        encoder.encode(sim, info, &mut bytes);
        frame::encode(sim, info, &mut key);
        let (got, want) = (
            decoder.decode(&bytes).unwrap(),
            frame::decode(&key).unwrap(),
        );
        assert_eq!(got.objects, want.objects, "tick {t}");
        assert_eq!(got.leaves, want.leaves, "tick {t}");
        assert_eq!(got.tiles, want.tiles, "tick {t}");
        assert_eq!(got.touched, want.touched, "tick {t}");
        let (mut g, w) = (got.header, want.header);
        g.sections = w.sections;
        assert_eq!(g, w, "tick {t}");
        if t > 1 {
            key_bytes += key.len();
            delta_bytes += bytes.len();
        }
    }
    (key_bytes, delta_bytes)
}

#[test]
fn frames_coded_against_the_one_before_decode_to_the_whole_picture() {
    let mut sim = Simulation::new(Settings {
        count: 2_000,
        speed: 3.0,
        ..Settings::default()
    })
    .unwrap();
    check_deltas(&mut sim, 40, |t, sim| {
        let s = sim.settings();
        let changed = match t {
            5 => Settings { size: 2.0, ..s },
            9 => Settings { max_items: 2, ..s },
            13 => Settings {
                broad_phase: BroadPhase::BruteForce,
                ..s
            },
            17 => Settings {
                broad_phase: BroadPhase::Quadtree,
                speed: 20.0,
                ..s
            },
            21 => Settings { count: 1_500, ..s },
            25 => Settings {
                scene: Scene::Level,
                tiles: 3_000,
                speed: LEVEL_SPEED_MAX,
                ..s
            },
            30 => Settings { tiles: 5_000, ..s },
            35 => Settings {
                scene: Scene::Objects(Layout::Clustered),
                ..s
            },
            _ => s,
        };
        sim.apply(changed).unwrap();
        sim.set_query((t % 7 < 4).then(|| Aabb::new([100.0, 100.0], [400.0, 300.0])));
        sim.set_player_direction(Vec2::new(1.0, if t % 10 < 5 { 1.0 } else { -1.0 }));
        if t % 6 == 0 {
            sim.pick(Some(Vec2::new(300.0, 600.0)));
        }
    });
}

#[test]
fn frames_coded_against_the_one_before_are_at_least_four_times_smaller() {
    for count in [10_000, 50_000] {
        let mut sim = Simulation::new(Settings {
            count,
            ..Settings::default()
        })
        .unwrap();
        let (key, delta) = check_deltas(&mut sim, 8, |_, _| {});
        assert!(
            4 * delta < key,
            "{count} objects: {delta} bytes of deltas against {key} of key frames"
        );
    }
}

#[test]
fn frames_carry_every_object_at_the_largest_count() {
    let sim = ticked(Settings {
        count: MAX_COUNT,
        ..Settings::default()
    });
    let mut bytes = Vec::new();
    frame::encode(&sim, FrameInfo::default(), &mut bytes);
    let decoded = frame::decode(&bytes).unwrap();
    assert_eq!(decoded.header.count, MAX_COUNT as u32);
    assert_eq!(decoded.objects.len(), MAX_COUNT + 1);
    assert_eq!(decoded.header.flags & Header::OBJECTS_OMITTED, 0);
    assert!(decoded.header.query_hits > 0);
    let leaves = sim.tree().nodes().filter(|n| n.is_leaf).count();
    assert_eq!(decoded.leaves.len(), leaves);
}

#[test]
fn brute_force_frames_carry_no_tree() {
    let sim = ticked(Settings {
        count: 500,
        broad_phase: BroadPhase::BruteForce,
        ..Settings::default()
    });
    let mut bytes = Vec::new();
    frame::encode(&sim, FrameInfo::default(), &mut bytes);
    let decoded = frame::decode(&bytes).unwrap();
    let h = decoded.header;
    assert!(decoded.leaves.is_empty());
    assert_eq!(
        (h.leaves, h.nodes, h.depth, h.sections & Header::TREE),
        (0, 0, 0, 0)
    );
    assert_eq!(h.checks, 501 * 500 / 2);
    assert_eq!(decoded.objects.len(), 501);
}

#[test]
fn level_frames_carry_the_tiles_once_per_version() {
    let mut sim = Simulation::new(Settings {
        count: 200,
        scene: Scene::Level,
        tiles: 4_000,
        ..Settings::default()
    })
    .unwrap();
    let (mut encoder, mut decoder) = (Encoder::new(), Decoder::new());
    let mut bytes = Vec::new();
    let mut carried = Vec::new();
    for t in 1..=30 {
        if t == 20 {
            sim.apply(Settings {
                tiles: 6_000,
                ..sim.settings()
            })
            .unwrap();
        }
        sim.tick(true);
        encoder.encode(
            &sim,
            FrameInfo {
                frame: t,
                ..FrameInfo::default()
            },
            &mut bytes,
        );
        let frame = decoder.decode(&bytes).unwrap();
        carried.push(frame.header.sections & Header::TILES != 0);
        let (tiles, version) = sim.tiles();
        assert_eq!(frame.header.tiles_version, version);
        assert_eq!(frame.tiles.len(), tiles.len());
        assert_eq!(frame.header.tiles as usize, tiles.len());
        assert_eq!(frame.touched, sim.touched_tiles());
    }
    let sent: Vec<usize> = (0..30).filter(|&i| carried[i]).collect();
    assert_eq!(
        sent,
        vec![0, 19],
        "tiles in the first frame and after the change only"
    );
}

#[test]
fn broken_frames_are_refused() {
    let sim = ticked(Settings {
        count: 10,
        ..Settings::default()
    });
    let mut bytes = Vec::new();
    frame::encode(&sim, FrameInfo::default(), &mut bytes);
    assert!(frame::decode(&bytes[..50]).unwrap_err().contains("header"));
    assert!(frame::decode(&bytes[..bytes.len() - 1]).is_err());
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(frame::decode(&bad).unwrap_err().contains("magic"));
    // Counts that would need gigabytes are refused before anything is
    // allocated.
    for (sent, leaves) in [(u32::MAX, u32::MAX), (477_218_589, 0), (0, 1 << 29)] {
        let mut huge = bytes[..frame::HEADER_LEN].to_vec();
        huge[12..16].copy_from_slice(&sent.to_le_bytes());
        huge[16..20].copy_from_slice(&leaves.to_le_bytes());
        huge.extend_from_slice(&[0; 101]);
        let err = frame::decode(&huge).unwrap_err();
        assert!(err.contains("more than") || err.contains("fit"), "{err}");
    }
    // A frame coded against another needs it.
    let mut encoder = Encoder::new();
    let mut first = Vec::new();
    encoder.encode(&sim, FrameInfo::default(), &mut first);
    let mut second = Vec::new();
    encoder.encode(&sim, FrameInfo::default(), &mut second);
    assert!(frame::decode(&second).unwrap_err().contains("key frame"));
    let mut decoder = Decoder::new();
    decoder.decode(&first).unwrap();
    decoder.decode(&second).unwrap();
    assert_eq!(frame::quantize(-5.0), 0);
    assert_eq!(frame::quantize(WORLD * 2.0), u16::MAX);
    assert_eq!(frame::dequantize(frame::quantize(WORLD)), WORLD);
}
