#!/usr/bin/python3
"""Drives a page in headless Chromium through the DevTools protocol and runs a scripted check.

Usage: drive_page.py URL SCREENSHOT.png STEPS.json
  STEPS.json is a list of steps, each {"eval": JS} (run, result ignored) or {"wait": JS, "timeout": s}
  (poll until the expression is truthy). Prints one JSON object: {"ok": bool, "failed": step or null,
  "detail": text}. Chromium is started here with its own profile folder and killed by its PID at the end.
"""
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import websockets


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit(json.dumps({"ok": False, "failed": None, "detail": "no chromium binary on PATH"}))


async def drive(debugger_url, url, steps, screenshot):
    async with websockets.connect(debugger_url, max_size=64 * 1024 * 1024) as cdp:
        next_id = 0

        async def call(method, **params):
            nonlocal next_id
            next_id += 1
            mine = next_id
            await cdp.send(json.dumps({"id": mine, "method": method, "params": params}))
            while True:
                reply = json.loads(await asyncio.wait_for(cdp.recv(), 30))
                if reply.get("id") == mine:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})

        async def evaluate(expression):
            result = await call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
            if "exceptionDetails" in result:
                raise RuntimeError(f"script error: {result['exceptionDetails'].get('text')} in {expression}")
            return result.get("result", {}).get("value")

        await call("Page.enable")
        await call("Runtime.enable")
        await call("Page.navigate", url=url)
        failed = None
        detail = ""
        for step in steps:
            if "eval" in step:
                await evaluate(step["eval"])
                continue
            deadline = time.monotonic() + float(step.get("timeout", 10))
            while True:
                try:
                    if await evaluate(step["wait"]):
                        break
                except RuntimeError as error:  # the page may still be loading
                    detail = str(error)
                if time.monotonic() > deadline:
                    failed = step
                    detail = await evaluate("document.body ? document.body.innerText : ''") or detail
                    break
                await asyncio.sleep(0.1)
            if failed is not None:
                break
        shot = await call("Page.captureScreenshot", format="png")
        import base64

        with open(screenshot, "wb") as out:
            out.write(base64.b64decode(shot["data"]))
        return failed, detail


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    url, screenshot, steps_file = sys.argv[1:]
    with open(steps_file) as f:
        steps = json.load(f)
    profile = tempfile.mkdtemp(prefix="kiln-chromium-")
    browser = subprocess.Popen(
        [chromium_binary(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-dev-shm-usage", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
         f"--user-data-dir={profile}", "--window-size=1100,900", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    # The result is printed only once Chromium is gone: the caller may kill this script as soon as it has read
    # the result, and Chromium, in a session of its own, would then outlive it.
    result = {"ok": False, "failed": None, "detail": "chromium did not start"}
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if time.monotonic() > deadline or browser.poll() is not None:
                return 1
            time.sleep(0.1)
        with open(port_file) as f:
            port = int(f.readline().strip())
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t.get("type") == "page")
        failed, detail = asyncio.run(drive(page["webSocketDebuggerUrl"], url, steps, screenshot))
        result = {"ok": failed is None, "failed": failed, "detail": detail}
        return 0 if failed is None else 1
    except Exception as error:
        result = {"ok": False, "failed": None, "detail": f"{type(error).__name__}: {error}"}
        return 1
    finally:
        try:
            os.killpg(browser.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        browser.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
