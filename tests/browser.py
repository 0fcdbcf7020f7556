"""Headless chromium for the report tests: image probes and screenshots."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_binary() -> str | None:
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def run_chromium(binary: str, url: str, *extra: str, timeout: float = 120) -> str:
    """Run headless chromium on ``url`` with ``extra`` flags; return stdout."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            *extra,
            url,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


PROBE = """<script>
window.addEventListener("load", () => {
  const out = [];
  for (const img of document.images) {
    out.push(img.complete && img.naturalWidth > 0 ? "ok:" + img.naturalWidth : "broken");
  }
  const pre = document.createElement("pre");
  pre.id = "image-probe";
  pre.textContent = out.join(",");
  document.body.appendChild(pre);
});
</script>
"""


def probe_images(binary: str, html_path: Path) -> list[str]:
    """Load ``html_path`` in chromium and return per-image 'ok:<naturalWidth>' or 'broken'."""
    probed = html_path.with_name(html_path.stem + ".probe.html")
    text = html_path.read_text(encoding="utf-8")
    probed.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    try:
        dom = run_chromium(binary, probed.as_uri(), "--virtual-time-budget=10000", "--dump-dom")
    finally:
        probed.unlink()
    start = dom.find('<pre id="image-probe">')
    if start < 0:
        raise AssertionError("the probe did not run: no #image-probe in the dumped DOM")
    body = dom[start + len('<pre id="image-probe">') : dom.index("</pre>", start)]
    return body.split(",") if body else []


def screenshot(binary: str, html_path: Path, png: Path, *, size: str = "1280,2400") -> Path:
    """Take a screenshot of ``html_path`` into ``png``."""
    run_chromium(
        binary,
        html_path.as_uri(),
        f"--screenshot={png}",
        f"--window-size={size}",
        "--hide-scrollbars",
    )
    return png


class Browser:
    """Headless chromium: ``probe(html_path)`` and ``screenshot(html_path, png)``."""

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def probe(self, html_path: Path) -> list[str]:
        return probe_images(self.binary, html_path)

    def screenshot(self, html_path: Path, png: Path, *, size: str = "1280,2400") -> Path:
        return screenshot(self.binary, html_path, png, size=size)
