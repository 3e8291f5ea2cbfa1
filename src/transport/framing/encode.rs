//! Writing one outgoing message in the framing the peer speaks.

use super::Framing;

/// Appends `payload` (compact JSON, so free of raw newlines) to `out` as one frame.
///
/// `Auto` only occurs before the peer has sent a byte; it writes LSP, the protocol default.
pub fn encode_frame(framing: Framing, payload: &[u8], out: &mut Vec<u8>) {
    match framing {
        Framing::Lsp | Framing::Auto => {
            let mut digits = [0u8; 20];
            let mut first = digits.len();
            let mut rest = payload.len();
            loop {
                first -= 1;
                digits[first] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            out.reserve(payload.len() + 40);
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(&digits[first..]);
            out.extend_from_slice(b"\r\n\r\n");
            out.extend_from_slice(payload);
        }
        Framing::Ndjson => {
            out.reserve(payload.len() + 1);
            out.extend_from_slice(payload);
            out.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_payloads() {
        let check = |framing: Framing, payload: &[u8], expected: &[u8]| {
            let mut out = b"prefix|".to_vec();
            encode_frame(framing, payload, &mut out);
            assert_eq!(
                out,
                [b"prefix|".as_slice(), expected].concat(),
                "{framing:?}"
            );
        };
        check(Framing::Lsp, b"{}", b"Content-Length: 2\r\n\r\n{}");
        check(Framing::Lsp, b"", b"Content-Length: 0\r\n\r\n");
        check(
            Framing::Lsp,
            &[b'7'; 1234],
            &[b"Content-Length: 1234\r\n\r\n".as_slice(), &[b'7'; 1234]].concat(),
        );
        check(Framing::Auto, b"[1]", b"Content-Length: 3\r\n\r\n[1]");
        check(Framing::Ndjson, b"{\"a\":1}", b"{\"a\":1}\n");
        check(Framing::Ndjson, b"", b"\n");
    }
}
