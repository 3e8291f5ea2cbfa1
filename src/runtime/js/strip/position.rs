//! Turns a byte offset into the 1-based line and column an error message shows.

/// Line and column (both 1-based) of `offset` in `source`. Lines end at JavaScript line
/// terminators (`\n`, `\r`, `\r\n`, U+2028, U+2029); the column counts Unicode scalar values
/// (chars), not bytes and not UTF-16 units.
pub(super) fn line_and_column(source: &str, offset: u32) -> (u32, u32) {
    let mut line = 1u32;
    let mut column = 1u32;
    let mut characters = source.char_indices().peekable();
    while let Some((index, character)) = characters.next() {
        if index >= offset as usize {
            break;
        }
        match character {
            '\r' if characters
                .peek()
                .is_some_and(|&(next, c)| c == '\n' && next < offset as usize) => {}
            '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                line += 1;
                column = 1;
            }
            _ => column += 1,
        }
    }
    (line, column)
}
