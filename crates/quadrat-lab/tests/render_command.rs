//! Runs `quadrat-lab render` and checks the pictures it writes; and the
//! command line around it: help, the default command, `bench` pointing
//! to quadrat-bench.

use std::fs;
use std::path::Path;
use std::process::Command;

fn lab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_quadrat-lab"))
        .args(args)
        .output()
        .expect("the quadrat-lab binary runs")
}

#[test]
fn render_writes_svg_and_png_of_the_tree() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render");
    let _ = fs::remove_dir_all(&dir);
    let output = lab(&[
        "render",
        "--layout",
        "clustered",
        "--n",
        "800",
        "--seed",
        "3",
        "--max-items",
        "4",
        "--max-depth",
        "6",
        "--query",
        "100,100,600,450",
        "--size",
        "300",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("nodes, depth") && stdout.contains("query returns"),
        "{stdout}"
    );

    let svg = fs::read_to_string(dir.join("tree.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("clustered · 800 objects"));
    // One outline per node, one square per object, at the least.
    assert!(
        svg.matches("<rect").count() > 800,
        "{} rects",
        svg.matches("<rect").count()
    );

    let png = fs::read(dir.join("tree.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (300, 340));
}

#[test]
fn render_refuses_bad_options() {
    for args in [
        &["render", "--layout", "spiral"][..],
        &["render", "--query", "1,2,3"],
        &["render", "--query", "1,2,3,NaN"],
        &["render", "--max-depth", "25"],
        &["render", "--n", "0"],
    ] {
        let output = lab(args);
        assert!(!output.status.success(), "{args:?}");
        assert!(!output.stderr.is_empty());
    }
}

#[test]
fn help_lists_every_command_and_serve_is_the_default() {
    let help = String::from_utf8(lab(&["--help"]).stdout).unwrap();
    for command in ["serve", "render", "--port", "--host"] {
        assert!(help.contains(command), "{help}");
    }
    // The benchmarks are a binary of their own; the help says how to run it.
    assert!(help.contains("-p quadrat-bench"), "{help}");
    // Serve's options work without the subcommand; a bad one is refused.
    let output = lab(&["--port", "not-a-port"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--port"));
}

#[test]
fn bench_is_refused_with_the_command_that_runs_the_benchmarks() {
    let output = lab(&["bench", "--quick", "--only", "pairs"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cargo run --release -p quadrat-bench -- --quick --only pairs"),
        "{stderr}"
    );
    let output = lab(&["bench"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`cargo run --release -p quadrat-bench`"),
        "{stderr}"
    );
}

/// The mixed layout's picture stays readable: the large objects are thin
/// outlines, so most of the world is still background and every node's
/// line shows (a fill, even see-through, piled up and buried both).
#[test]
fn the_mixed_layout_leaves_the_nodes_readable() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render_mixed");
    let _ = fs::remove_dir_all(&dir);
    let output = lab(&[
        "render",
        "--layout",
        "mixed",
        "--n",
        "3000",
        "--size",
        "400",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{output:?}");
    let decoder = png::Decoder::new(std::io::BufReader::new(
        fs::File::open(dir.join("tree.png")).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut rgb).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let width = info.width as usize;
    // The world square, inside its border.
    let (mut background, mut all) = (0, 0);
    for y in 4..396 {
        for x in 4..396 {
            let k = 3 * (y * width + x);
            all += 1;
            if rgb[k..k + 3] == [0xfb, 0xfb, 0xfd] {
                background += 1;
            }
        }
    }
    let share = f64::from(background) / f64::from(all);
    assert!(
        share > 0.5,
        "only {:.0}% of the world is background",
        100.0 * share
    );
}
