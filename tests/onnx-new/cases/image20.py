"""ImageDecoder (opset 20). ONNX Runtime 1.30 has no CPU kernel for it, so
the reference is ONNX's own: Pillow (PIL.Image.open on the bytes), RGB as
convert("RGB"), BGR its channels reversed, Grayscale as convert("L");
exact, uint8. The images are made here with Pillow's encoders (JPEG
through libjpeg-turbo, PNG through zlib), seeded; the error cases are
hostile bytes: truncated, corrupted, random, other formats."""
import io
import zlib

import numpy as np
from PIL import Image

from caselib import Case, rng

NO_ORT = "ONNX Runtime 1.30 has no ImageDecoder kernel on CPU; the reference is Pillow"


def picture(r, h, w):
    """A smooth colour picture with some detail (what JPEG is made for)."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (h + w) + 60], axis=-1)
    return np.clip(base + r.normal(0, 12, (h, w, 3)), 0, 255).astype(np.uint8)


def encode(img, fmt, **kw):
    b = io.BytesIO()
    img.save(b, format=fmt, **kw)
    return np.frombuffer(b.getvalue(), np.uint8).copy()


def jpeg_dims(data, h, w):
    """data with its frame header (SOF0) saying h x w."""
    b = bytearray(data.tobytes())
    at = b.find(b"\xff\xc0")
    b[at + 5:at + 9] = h.to_bytes(2, "big") + w.to_bytes(2, "big")
    return np.frombuffer(bytes(b), np.uint8).copy()


def pil_ref(pixel_format):
    def ref(data):
        img = Image.open(io.BytesIO(data.tobytes()))
        if pixel_format == "Grayscale":
            return [np.asarray(img.convert("L"))[:, :, None]]
        rgb = np.asarray(img.convert("RGB"))
        return [rgb[:, :, ::-1].copy() if pixel_format == "BGR" else rgb]
    return ref


def case(name, data, pixel_format="RGB", **kw):
    attrs = {} if pixel_format == "RGB" and "keep_default" in kw else {"pixel_format": pixel_format}
    kw.pop("keep_default", None)
    if "error" in kw:
        return Case("image_decoder20_" + name, "ImageDecoder", 20, {"encoded_stream": data},
                    attrs=attrs, outputs=["image"], out_types={"image": "uint8"}, **kw)
    return Case("image_decoder20_" + name, "ImageDecoder", 20, {"encoded_stream": data},
                attrs=attrs, outputs=["image"], ref=pil_ref(pixel_format), ort_differs=NO_ORT,
                **kw)


def cases():
    r = rng("image_decoder20")
    rgb = Image.fromarray(picture(r, 21, 30))
    jpeg = encode(rgb, "JPEG", quality=90)
    yield case("jpeg_rgb_default", jpeg, keep_default=True)
    yield case("jpeg_bgr", jpeg, "BGR")
    yield case("jpeg_grayscale", jpeg, "Grayscale")
    yield case("jpeg_progressive_444", encode(rgb, "JPEG", quality=75, progressive=True,
                                              subsampling=0))
    grey = Image.fromarray(picture(r, 9, 14)[:, :, 1])
    yield case("jpeg_grey_as_rgb", encode(grey, "JPEG"), "RGB")
    yield case("jpeg_grey_as_grayscale", encode(grey, "JPEG"), "Grayscale")
    yield case("png_rgb", encode(rgb, "PNG"))
    yield case("png_rgba_alpha_dropped", encode(rgb.convert("RGBA"), "PNG"), "BGR")
    yield case("png_palette", encode(rgb.convert("P", palette=Image.ADAPTIVE, colors=16), "PNG"))
    yield case("png_palette_grayscale",
               encode(rgb.convert("P", palette=Image.ADAPTIVE, colors=16), "PNG"), "Grayscale")
    yield case("png_grey_1bit", encode(grey.convert("1"), "PNG"), "RGB")
    yield case("png_grey_grayscale", encode(grey, "PNG"), "Grayscale")
    yield case("png_one_pixel", encode(Image.new("RGB", (1, 1), (200, 10, 30)), "PNG"))
    # hostile bytes: a clean error naming the node, never a crash
    yield case("jpeg_truncated_in_tables", jpeg[:len(jpeg) // 3], error="not a valid JPEG")
    yield case("jpeg_truncated_in_scan", jpeg[:len(jpeg) - 40],
               error="the data ends before the image")
    yield case("jpeg_too_large", jpeg_dims(jpeg, 60000, 60000),
               error="over Pillow's decompression-bomb bound")
    yield case("jpeg_header_only", jpeg[:20], error="not a valid JPEG")
    bad = jpeg.copy()
    bad[len(bad) // 3:len(bad) // 3 + 40] = r.integers(0, 255, 40)
    bad[2:4] = [0xff, 0xc0]  # a frame header where the APP0 marker was, lengths scrambled
    yield case("jpeg_corrupt_markers", bad, error="not a valid JPEG")
    png = encode(rgb, "PNG")
    yield case("png_truncated", png[:len(png) - 30], error="not a valid PNG")
    crc = png.copy()
    crc[40] ^= 0x55  # inside IHDR/IDAT: its CRC no longer matches
    yield case("png_bad_crc", crc, error="not a valid PNG")
    huge = bytearray(png[:33].tobytes())
    huge[16:24] = (1 << 30).to_bytes(4, "big") + (1 << 30).to_bytes(4, "big")
    huge[29:33] = zlib.crc32(bytes(huge[12:29])).to_bytes(4, "big")
    yield case("png_huge_dims", np.frombuffer(bytes(huge), np.uint8).copy(),
               error="not a valid PNG")
    yield case("random_bytes", r.integers(0, 255, 64).astype(np.uint8),
               error="is not an image")
    yield case("empty", np.zeros(0, np.uint8), error="is not an image")
    yield case("bmp_declined", encode(rgb, "BMP"), error="is a BMP image: graphcc decodes "
               "JPEG and PNG only", declined=True)
    yield case("bad_pixel_format", jpeg, "RGBA", error="attribute 'pixel_format' is \"RGBA\"; "
               "expected RGB, BGR or Grayscale")
    yield Case("image_decoder20_not_bytes", "ImageDecoder", 20,
               {"encoded_stream": np.zeros((2, 3), np.uint8)}, outputs=["image"],
               out_types={"image": "uint8"}, error="must be a 1-D uint8 tensor")
