//! Runs `quadrat-bench` on a tiny sweep and checks what it writes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use quadrat_bench::Implementation;

const LAYOUTS: [&str; 3] = ["uniform", "clustered", "mixed"];

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quadrat-bench"))
        .args(args)
        .output()
        .expect("the quadrat-bench binary runs")
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    dir
}

#[test]
fn quick_bench_checks_exactness_and_writes_every_output() {
    let dir = out_dir("bench-quick");
    let output = bench(&[
        "--quick",
        "--n",
        "500,2k",
        "--runs",
        "1",
        "--moving-n",
        "2k",
        "--warmup",
        "1",
        "--frames",
        "2",
        "--query-n",
        "2k",
        "--queries",
        "200",
        "--nearest-k",
        "5",
        "--resting-n",
        "500,2k",
        "--resting-movers",
        "50,200",
        "--brownian-n",
        "300",
        "--out",
        dir.to_str().expect("a UTF-8 path"),
    ]);
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "bench failed:\n{stdout}\n{stderr}");

    // The exactness check ran before the timing, against brute force, and
    // every other implementation agreed.
    let all = Implementation::ALL;
    for layout in LAYOUTS {
        for n in ["500", "2,000"] {
            let prefix = format!("exact: pairs {layout} n={n}: ");
            let line = stdout
                .lines()
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("no exactness line `{prefix}` in\n{stdout}"));
            assert!(line.contains("pairs by brute; agree: "), "{line}");
            for imp in all
                .iter()
                .filter(|&&i| i != Implementation::Brute && i.is_static())
            {
                assert!(
                    line.contains(imp.name()),
                    "{} not checked: {line}",
                    imp.name()
                );
            }
        }
    }
    for what in [
        "exact: moving drift n=2,000",
        "exact: moving teleport n=2,000",
        "exact: queries area n=2,000",
        "exact: queries circle n=2,000",
        "exact: queries point n=2,000",
    ] {
        assert!(stdout.contains(what), "no `{what}` in\n{stdout}");
    }
    // The resting scenes: every split and the world agreed with brute force.
    for scene in ["confined", "spread"] {
        for (ns, nm) in [(500, 50), (2000, 200)] {
            let what = format!("exact: resting tiles, movers {scene} {ns}+{nm}: ");
            let line = stdout
                .lines()
                .find(|l| l.starts_with(&what))
                .unwrap_or_else(|| panic!("no `{what}` in\n{stdout}"));
            assert!(
                line.contains("by brute force; agree: quadrat world"),
                "{line}"
            );
            assert!(line.contains("quadrat split"), "{line}");
            if cfg!(feature = "peers") {
                for peer in ["broccoli split", "parry2d split", "rstar split"] {
                    assert!(line.contains(peer), "{peer} not checked: {line}");
                }
            }
        }
    }
    let what = "exact: resting brownian 0+300: ";
    let line = stdout
        .lines()
        .find(|l| l.starts_with(what))
        .unwrap_or_else(|| panic!("no `{what}` in\n{stdout}"));
    assert!(
        line.contains("by brute force; agree: quadrat world"),
        "{line}"
    );
    assert!(dir.join("resting.md").is_file() && dir.join("resting.png").is_file());
    // Nearest and ray casts were checked against brute force, and the peers
    // that answer them agreed (up to ties, which the line would name).
    let peers = cfg!(feature = "peers");
    for (what, peer) in [
        (
            "exact: queries nearest n=2,000: 200 points, k = 5, 1,000 boxes found by brute; agree: ",
            "rstar",
        ),
        ("exact: queries raycast n=2,000: 200 rays, ", "parry2d"),
    ] {
        let agree = if peers {
            vec![peer, "quadrat"]
        } else {
            vec!["quadrat"]
        };
        let line = stdout
            .lines()
            .find(|l| l.starts_with(what))
            .unwrap_or_else(|| panic!("no `{what}` in\n{stdout}"));
        let (_, agreed) = line.split_once("; agree: ").expect("an agree list");
        for name in agree {
            assert!(agreed.contains(name), "{name} not checked: {line}");
        }
    }

    // Every implementation followed the moving boxes and agreed.
    for motion in ["drift", "teleport"] {
        let prefix = format!("exact: moving {motion} n=2,000: ");
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in\n{stdout}"));
        for imp in all.iter().filter(|&&i| i != Implementation::Brute) {
            assert!(
                line.contains(imp.name()),
                "{} not checked: {line}",
                imp.name()
            );
        }
    }

    check_csv(
        &dir.join("bench.csv"),
        all.iter().filter(|i| i.is_static()).count(),
    );
    check_markdown(&dir.join("bench.md"));
    check_png(&dir.join("pairs.png"));
    check_svg(&dir.join("pairs.svg"));
}

fn check_csv(path: &Path, implementations: usize) {
    let text = fs::read_to_string(path).expect("bench.csv exists");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    assert_eq!(
        header,
        [
            "benchmark",
            "layout",
            "n",
            "implementation",
            "median_ms",
            "samples",
            "extrapolated",
            "count",
            "queries",
            "queries_per_s"
        ]
    );
    let names: Vec<&str> = Implementation::ALL.iter().map(|i| i.name()).collect();
    let mut pairs_rows = 0;
    let mut query_kinds = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), header.len(), "{line}");
        let n: usize = f[2].parse().expect("n is a count");
        let ms: f64 = f[4].parse().expect("median_ms is a number");
        let samples: usize = f[5].parse().expect("samples is a count");
        let extrapolated: bool = f[6].parse().expect("extrapolated is a bool");
        let count: u64 = f[7].parse().expect("count is a count");
        let queries: usize = f[8].parse().expect("queries is a count");
        assert!(names.contains(&f[3]), "unknown implementation in {line}");
        assert!(LAYOUTS.contains(&f[1]), "unknown layout in {line}");
        assert!(ms > 0.0 && ms.is_finite(), "{line}");
        assert!(!extrapolated && samples >= 1, "{line}");
        if f[0] == "pairs" {
            pairs_rows += 1;
            assert!([500, 2000].contains(&n), "{line}");
        } else if f[0].starts_with("query-") {
            assert_eq!(queries, 200, "{line}");
            let rate: f64 = f[9].parse().expect("queries_per_s is a number");
            assert!(rate > 0.0, "{line}");
            query_kinds.push(f[0].to_owned());
            if f[0] == "query-nearest" {
                assert_eq!(count, 5 * 200, "k = 5 boxes per query: {line}");
            }
        } else {
            assert!(f[0].starts_with("moving-"), "{line}");
        }
    }
    assert_eq!(pairs_rows, LAYOUTS.len() * 2 * implementations);
    query_kinds.dedup();
    assert_eq!(
        query_kinds,
        [
            "query-area",
            "query-circle",
            "query-point",
            "query-nearest",
            "query-raycast"
        ]
    );
}

fn check_markdown(path: &Path) {
    let text = fs::read_to_string(path).expect("bench.md exists");
    for heading in [
        "## Build + all pairs",
        "### uniform",
        "### clustered",
        "### mixed",
        "## Moving frame",
        "## Queries",
    ] {
        assert!(text.contains(heading), "no `{heading}` in\n{text}");
    }
    assert!(text.contains("| n | pairs | implementation | median (ms) |"));
    if cfg!(feature = "peers") {
        for row in ["| nearest | rstar |", "| raycast | parry2d |"] {
            assert!(text.contains(row), "no `{row}` in\n{text}");
        }
    }
    assert!(text.contains("| **quadrat** |"));
    if cfg!(feature = "peers") {
        for line in [
            "## quadrat against broccoli",
            "| build + all pairs | uniform | 2,000 |",
            "| build + all pairs | mixed | 500 |",
            "| moving frame | drift | 2,000 |",
            "| moving frame | teleport | 2,000 |",
            "Queries per second, quadrat's over the best peer's",
            "Heap over 2,000 boxes, quadrat's over broccoli's",
        ] {
            assert!(text.contains(line), "no `{line}` in\n{text}");
        }
    }
    // Every table row has as many cells as its header.
    let mut cells = None;
    for line in text.lines() {
        if line.starts_with('|') {
            let count = line.matches('|').count();
            assert_eq!(*cells.get_or_insert(count), count, "ragged row: {line}");
        } else {
            cells = None;
        }
    }
}

fn check_png(path: &Path) {
    let bytes = fs::read(path).expect("pairs.png exists");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert!(width >= 640 && height >= 400, "{width} × {height}");
    assert_eq!(&bytes[bytes.len() - 8..bytes.len() - 4], b"IEND");
}

fn check_svg(path: &Path) {
    let text = fs::read_to_string(path).expect("pairs.svg exists");
    assert!(text.trim_start().starts_with("<svg"), "starts like SVG");
    assert!(text.trim_end().ends_with("</svg>"), "ends like SVG");
    for label in ["n (boxes)", "median time (ms)", "quadrat", "uniform layout"] {
        assert!(text.contains(label), "no `{label}` in the SVG");
    }
}

#[test]
fn bad_arguments_are_refused_with_a_reason() {
    let output = bench(&["--n", "ten"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`ten` is not a count"), "{stderr}");

    let output = bench(&["--impls", "octree"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("quadrat"),
        "lists the possible values: {stderr}"
    );
}

#[test]
fn memory_figures_count_every_index_byte() {
    let dir = out_dir("bench-memory");
    let output = bench(&[
        "--only",
        "memory",
        "--query-n",
        "20k",
        "--out",
        dir.to_str().expect("a UTF-8 path"),
    ]);
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert!(output.status.success(), "bench failed:\n{stdout}");
    let md = fs::read_to_string(dir.join("bench.md")).expect("bench.md written");
    assert!(md.contains("## Memory"), "{md}");
    // Rows: | name | peak | retained | retained bytes per box | × broccoli |
    let rows: Vec<Vec<String>> = md
        .lines()
        .skip_while(|l| !l.starts_with("## Memory"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| implementation"))
        .map(|l| l.split('|').map(|c| c.trim().replace('*', "")).collect())
        .collect();
    let per_box = |name: &str| -> (f64, f64, f64) {
        let row = rows
            .iter()
            .find(|r| r[1] == name)
            .unwrap_or_else(|| panic!("no memory row for {name}:\n{md}"));
        let num = |i: usize| row[i].parse::<f64>().expect("a number");
        (num(2), num(3), num(4))
    };
    // Each index holds at least every box (16 bytes) and its payload
    // (4 bytes), so a counter that missed allocations would show less; and
    // what is retained was live at the peak.
    let mut names = vec!["quadrat"];
    if cfg!(feature = "peers") {
        names.extend(["broccoli", "rstar", "parry2d"]);
    }
    for name in names {
        let (peak, retained, bytes) = per_box(name);
        assert!(
            (20.0..400.0).contains(&bytes),
            "{name}: {bytes} bytes per box"
        );
        assert!(
            peak >= retained,
            "{name}: peak {peak} < retained {retained}"
        );
    }
}
