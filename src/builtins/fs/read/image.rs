//! Images (PNG, JPEG, GIF, WebP) as the image content blocks models take: base64 with its
//! MIME type. One that already fits is sent as it is, unchanged (an animated GIF keeps its
//! frames); a larger one is decoded within memory limits, scaled down to fit the long edge
//! and re-encoded until it fits the byte cap. The caps follow Claude Code's: the API
//! scales anything past 1568 px on the long edge anyway, and takes at most 5 MB of base64
//! per image (3.75 MB of bytes).

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use serde::{Deserialize, Serialize};
use std::io::Cursor;

/// Longest edge sent, in pixels.
pub const MAX_LONG_EDGE: u32 = 1568;
/// Most bytes of image data sent (its base64 is 5 MiB).
pub const MAX_IMAGE_BYTES: usize = 3 * 1024 * 1024 + 768 * 1024;
/// Most memory one decode may take (a 100-megapixel RGBA image is 400 MB: refused).
const MAX_DECODE_BYTES: u64 = 256 * 1024 * 1024;
/// Widest and tallest image decoded.
const MAX_DIMENSION: u32 = 32_768;
/// Times the long edge is cut by a quarter before an image that will not fit is refused.
const SHRINK_STEPS: usize = 8;

/// An image format `read` sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl Format {
    /// The format whose signature starts `head`.
    pub fn of_magic(head: &[u8]) -> Option<Format> {
        if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Format::Png)
        } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
            Some(Format::Jpeg)
        } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
            Some(Format::Gif)
        } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
            Some(Format::Webp)
        } else {
            None
        }
    }

    /// The format of a notebook output's MIME type.
    pub fn of_mime(mime: &str) -> Option<Format> {
        match mime {
            "image/png" => Some(Format::Png),
            "image/jpeg" => Some(Format::Jpeg),
            "image/gif" => Some(Format::Gif),
            "image/webp" => Some(Format::Webp),
            _ => None,
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::Webp => "image/webp",
        }
    }

    fn codec(self) -> ImageFormat {
        match self {
            Format::Png => ImageFormat::Png,
            Format::Jpeg => ImageFormat::Jpeg,
            Format::Gif => ImageFormat::Gif,
            Format::Webp => ImageFormat::WebP,
        }
    }
}

/// The `image` value: what was sent, and the file it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageRead {
    /// Root-relative path.
    pub path: String,
    /// MIME type of `data`.
    pub mime_type: String,
    /// Size of the file.
    pub bytes: u64,
    /// Width sent.
    pub width: u32,
    /// Height sent.
    pub height: u32,
    /// Width of the file's image.
    pub original_width: u32,
    /// Height of the file's image.
    pub original_height: u32,
    /// The image sent, base64 (left out of the persisted metadata).
    #[serde(default)]
    pub data: String,
}

/// An image made ready to send.
#[derive(Debug)]
pub struct Fitted {
    pub format: Format,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub original_width: u32,
    pub original_height: u32,
}

impl Fitted {
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }
}

/// The image in `bytes`, within [`MAX_LONG_EDGE`] and [`MAX_IMAGE_BYTES`].
pub fn fit(format: Format, bytes: Vec<u8>) -> Result<Fitted, String> {
    let header = ImageReader::with_format(Cursor::new(&bytes), format.codec());
    let (width, height) = header.into_dimensions().map_err(|e| e.to_string())?;
    if width.max(height) <= MAX_LONG_EDGE && bytes.len() <= MAX_IMAGE_BYTES {
        return Ok(Fitted {
            format,
            bytes,
            width,
            height,
            original_width: width,
            original_height: height,
        });
    }
    let mut reader = ImageReader::with_format(Cursor::new(&bytes), format.codec());
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    limits.max_image_width = Some(MAX_DIMENSION);
    limits.max_image_height = Some(MAX_DIMENSION);
    reader.limits(limits);
    let image = reader.decode().map_err(|e| e.to_string())?;
    drop(bytes);
    let mut edge = MAX_LONG_EDGE;
    for _ in 0..SHRINK_STEPS {
        let scaled = image.thumbnail(edge, edge);
        // PNG keeps a screenshot's text sharp; a photo (or a PNG too large) goes as JPEG.
        let tries: &[Option<u8>] = match format {
            Format::Jpeg => &[Some(85), Some(70)],
            _ => &[None, Some(85), Some(70)],
        };
        for quality in tries {
            let (format, encoded) = encode(&scaled, *quality)?;
            if encoded.len() <= MAX_IMAGE_BYTES {
                return Ok(Fitted {
                    format,
                    bytes: encoded,
                    width: scaled.width(),
                    height: scaled.height(),
                    original_width: width,
                    original_height: height,
                });
            }
        }
        edge = edge * 3 / 4;
    }
    Err(format!(
        "it does not fit in {MAX_IMAGE_BYTES} bytes even at {edge} px"
    ))
}

/// PNG (`None`) or JPEG at `quality`.
fn encode(image: &DynamicImage, quality: Option<u8>) -> Result<(Format, Vec<u8>), String> {
    let mut out = Vec::new();
    match quality {
        None => {
            image
                .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
                .map_err(|e| e.to_string())?;
            Ok((Format::Png, out))
        }
        Some(quality) => {
            let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
            rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut out, quality))
                .map_err(|e| e.to_string())?;
            Ok((Format::Jpeg, out))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 251) as u8])
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(image)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn signatures_name_their_formats() {
        assert_eq!(Format::of_magic(&png(2, 2)), Some(Format::Png));
        assert_eq!(Format::of_magic(b"\xff\xd8\xff\xe0"), Some(Format::Jpeg));
        assert_eq!(Format::of_magic(b"GIF89a.."), Some(Format::Gif));
        assert_eq!(
            Format::of_magic(b"RIFF\0\0\0\0WEBPVP8 "),
            Some(Format::Webp)
        );
        assert_eq!(Format::of_magic(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(Format::of_magic(b"%PDF-1.4"), None);
    }

    #[test]
    fn a_small_image_goes_unchanged_and_a_large_one_is_scaled_into_the_caps() {
        let small = png(40, 30);
        let fitted = fit(Format::Png, small.clone()).unwrap();
        assert_eq!(fitted.bytes, small);
        assert_eq!((fitted.width, fitted.height), (40, 30));

        let fitted = fit(Format::Png, png(2000, 500)).unwrap();
        assert_eq!((fitted.width, fitted.height), (MAX_LONG_EDGE, 392));
        assert_eq!((fitted.original_width, fitted.original_height), (2000, 500));
        assert!(fitted.bytes.len() <= MAX_IMAGE_BYTES);
        let decoded = image::load_from_memory(&fitted.bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (MAX_LONG_EDGE, 392));
    }

    #[test]
    fn a_corrupt_image_is_an_error_not_a_panic() {
        let mut broken = png(3000, 10);
        broken.truncate(200);
        assert!(fit(Format::Png, broken).is_err());
        assert!(fit(Format::Jpeg, b"\xff\xd8\xff\xe0garbage".to_vec()).is_err());
    }
}
