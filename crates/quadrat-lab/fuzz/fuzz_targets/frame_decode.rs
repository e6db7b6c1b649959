//! Any bytes as a frame: `frame::decode` never panics, and a frame it
//! accepts has exactly the records its header announces, in exactly as many
//! bytes as the format says.

#![no_main]

use libfuzzer_sys::fuzz_target;
use quadrat_lab::serve::frame::{self, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = frame::decode(data) {
        let (sent, leaves) = (frame.header.sent as usize, frame.header.leaves as usize);
        assert_eq!(frame.objects.len(), sent);
        assert_eq!(frame.leaves.len(), leaves);
        assert_eq!(data.len(), HEADER_LEN + 9 * sent + 8 * leaves);
    }
});
