// What the browser tests of tinygpt serve's pages share (chat_page_test.mjs,
// explain_page_test.mjs): Debian's Chromium driven by puppeteer-core from build/npm,
// a page watched for requests to other origins and for script errors, and the
// layout check (nothing overlaps, no text overflows its box, no sideways scroll).
import {createRequire} from 'node:module';
import path from 'node:path';
import {execFileSync} from 'node:child_process';
import {fileURLToPath} from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export async function launchChromium() {
  const puppeteer = createRequire(path.join(root, 'build/npm/'))('puppeteer-core');
  return puppeteer.launch({
    executablePath: execFileSync('sh', ['-c', 'command -v chromium']).toString().trim(),
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

// Calls fail() for a request to any origin but `origin` and for every script error;
// onRequest sees each request the page makes to its own server.
export function watchPage(page, origin, fail, onRequest = () => {}) {
  page.on('request', (request) => {
    const url = request.url();
    // A data: URL is the page's own bytes, not a request to anyone.
    if (!url.startsWith('data:') && new URL(url).origin !== origin) fail('the page asked another origin: ' + url);
    else onRequest(request);
  });
  page.on('pageerror', (error) => fail('script error: ' + error.message));
}

// The layout's problems, in words: elements matching `selector` that overlap (an element and what
// it contains excepted), boxes whose text overflows (tags in `unboxed`, whose content scrolls or is
// drawn, excepted), a page wider than the window.
export function layoutProblems(page, selector, unboxed = ['INPUT', 'TEXTAREA', 'SCRIPT']) {
  return page.evaluate((selector, unboxed) => {
    const found = [];
    // What of an element is on screen: its box cut by every ancestor that clips.
    function visibleRect(element) {
      let {left, top, right, bottom} = element.getBoundingClientRect();
      for (let parent = element.parentElement; parent; parent = parent.parentElement) {
        if (getComputedStyle(parent).overflow === 'visible') continue;
        const clip = parent.getBoundingClientRect();
        left = Math.max(left, clip.left); top = Math.max(top, clip.top);
        right = Math.min(right, clip.right); bottom = Math.min(bottom, clip.bottom);
      }
      return right - left > 0 && bottom - top > 0 ? {left, top, right, bottom} : null;
    }
    const name = (element) => element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') +
                              (element.className ? '.' + String(element.className).replace(/ /g, '.') : '');
    const shown = [...document.querySelectorAll(selector)]
      .filter((element) => element.checkVisibility() && !element.classList.contains('visually-hidden'))
      .map((element) => ({element, rect: visibleRect(element)}))
      .filter((item) => item.rect);
    for (let i = 0; i < shown.length; i++) {
      for (let j = i + 1; j < shown.length; j++) {
        const [a, b] = [shown[i], shown[j]];
        if (a.element.contains(b.element) || b.element.contains(a.element)) continue;
        const overlap = Math.min(a.rect.right, b.rect.right) - Math.max(a.rect.left, b.rect.left) > 0.5 &&
                        Math.min(a.rect.bottom, b.rect.bottom) - Math.max(a.rect.top, b.rect.top) > 0.5;
        if (overlap) found.push(`${name(a.element)} overlaps ${name(b.element)}`);
      }
    }
    for (const element of document.body.querySelectorAll('*')) {
      const style = getComputedStyle(element);
      if (!element.checkVisibility() || style.display === 'inline' || style.overflowX !== 'visible' ||
          unboxed.includes(element.tagName)) continue;
      if (element.scrollWidth > element.clientWidth + 1) found.push(`${name(element)}'s text overflows its box`);
    }
    if (document.documentElement.scrollWidth > innerWidth) found.push(`the page is ${document.documentElement.scrollWidth} px wide`);
    return [...new Set(found)];
  }, selector, unboxed);
}
