//! Any bytes as frames: `frame::Decoder` never panics, whether it reads
//! them as a connection's first frame or after a real one, and a frame it
//! accepts holds exactly what its header announces.

#![no_main]

use libfuzzer_sys::fuzz_target;
use quadrat_lab::serve::frame::{self, Decoder, FrameInfo};
use quadrat_lab::sim::{Settings, Simulation};

fuzz_target!(|data: &[u8]| {
    let check = |frame: &frame::Frame| {
        let h = frame.header;
        assert_eq!(frame.objects.len(), h.sent as usize);
        assert_eq!(frame.leaves.len(), h.leaves as usize);
        assert_eq!(frame.touched.len(), h.touched as usize);
        assert!(frame.touched.iter().all(|&t| (t as usize) < frame.tiles.len()));
    };
    if let Ok(frame) = frame::decode(data) {
        check(&frame);
    }
    // After a real key frame, as a frame coded against it.
    let sim = Simulation::new(Settings {
        count: 10,
        ..Settings::default()
    })
    .expect("valid settings");
    let mut key = Vec::new();
    frame::encode(&sim, FrameInfo::default(), &mut key);
    let mut decoder = Decoder::new();
    decoder.decode(&key).expect("a key frame decodes");
    if let Ok(frame) = decoder.decode(data) {
        check(&frame);
    }
});
