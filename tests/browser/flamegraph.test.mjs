// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Opens a pyuprof flame graph SVG in Debian's headless Chromium (playwright-core drives it; no
// browser of playwright's own) and uses it as a person would: hover a frame (tooltip and
// details line), click it (it must then span the full width; reset brings it back), search
// with Ctrl-F (matches highlighted, matched % equal to the one computed here from the file),
// widen the window (the frames must fill it), then a screenshot that must not be blank. Any page error, console error or request for
// something outside the file fails the run.
//
// usage: node flamegraph.test.mjs FILE.svg [--threads NAME,...] [--screenshot OUT.png]
//        [--search TEXT] [--cfunc NAME]
// Prints one "ok"/"not ok" line per check; exit status 1 if any failed.
import { chromium } from 'playwright-core';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name) => {
	const i = args.indexOf(name);
	return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const threads = opt('--threads');
const shot = opt('--screenshot');
const searchText = opt('--search');
const cfunc = opt('--cfunc');
if (args.length !== 1) {
	console.error('usage: node flamegraph.test.mjs FILE.svg [--threads NAME,...] ' +
		'[--screenshot OUT.png] [--search TEXT] [--cfunc NAME]');
	process.exit(2);
}
const file = resolve(args[0]);
const source = readFileSync(file, 'utf8');

let failed = 0;
let n = 0;
function check(cond, what, detail) {
	n++;
	const why = cond || !detail ? '' : `: ${detail}`;
	console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${what}${why}`);
	if (!cond)
		failed++;
	return cond;
}

const profileDir = mkdtempSync(join(tmpdir(), 'pyuprof-chromium-'));
// a new, empty profile: playwright passes it as --user-data-dir
const context = await chromium.launchPersistentContext(profileDir, {
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	viewport: { width: 1200, height: 800 },
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const errors = [];
try {
	const page = await context.newPage();
	page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
	page.on('console', (m) => {
		if (m.type() === 'error')
			errors.push(`console error: ${m.text()}`);
	});
	// self-contained: the only thing loaded is the file itself
	await page.route('**/*', (route) => {
		const url = route.request().url();
		if (url === pathToFileURL(file).href)
			return route.continue();
		errors.push(`request outside the file: ${url}`);
		return route.abort();
	});
	await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });

	// The frames as written (the script removes their <title>s), parsed from the file.
	const frames = await page.evaluate((src) => {
		const doc = new DOMParser().parseFromString(src, 'image/svg+xml');
		if (doc.querySelector('parsererror'))
			return null;
		return Array.from(doc.getElementById('frames').children, (g, i) => {
			const t = g.querySelector('title').textContent.split('\n');
			const r = g.querySelector('rect');
			return {
				i, name: t[0], loc: t[1], stats: t[2],
				root: g.classList.contains('r'),
				x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'),
				d: +g.getAttribute('data-d'), px: +r.getAttribute('x'),
				pw: +r.getAttribute('width'),
			};
		});
	}, source);
	if (!check(frames && frames.length > 1, 'the SVG parses and has frames'))
		throw new Error('nothing to test');
	const total = frames[0].w;
	const fw = +(await page.evaluate(() => document.documentElement.getAttribute('data-fw')));
	const pad = +(await page.evaluate(() => document.documentElement.getAttribute('data-pad')));
	const sel = (f) => `#frames > g:nth-child(${f.i + 1})`;
	const rectOf = (f) => page.evaluate((s) => {
		const r = document.querySelector(s + ' rect');
		const shown = getComputedStyle(document.querySelector(s)).display !== 'none';
		return { x: +r.getAttribute('x'), w: +r.getAttribute('width'), shown };
	}, sel(f));

	// a function frame wide enough to hover and narrower than the whole, so zoom shows
	const cands = frames.filter((f) => !f.root && f.pw >= 40 && f.w <= 0.8 * total);
	if (!check(cands.length > 0, 'a function frame between 40 px and 80% wide'))
		throw new Error('nothing to test');
	const target = cands.reduce((a, b) => (b.d > a.d || (b.d === a.d && b.w > a.w) ? b : a));

	// hover: tooltip and details name the function, its file:line, time and share
	await page.hover(`${sel(target)} rect`, { position: { x: 5, y: 5 } });
	const tip = await page.evaluate(() => {
		const t = document.getElementById('tip');
		return {
			shown: getComputedStyle(t).display !== 'none',
			text: Array.from(t.querySelectorAll('tspan'), (s) => s.textContent)
				.join('\n'),
			details: document.getElementById('details').textContent,
		};
	});
	check(tip.shown, 'hover shows the tooltip');
	check(tip.text === [target.name, target.loc, target.stats].join('\n'),
		'the tooltip gives name, file:line, time and %', JSON.stringify(tip.text));
	check(/\d+\.\d\d%/.test(tip.text) && /\d+(\.\d+)? (s|ms|µs|ns)/.test(tip.text),
		'the tooltip has a time and a percentage', JSON.stringify(tip.text));
	check(tip.details.includes(`${target.name} (${target.loc})`) &&
		tip.details.includes(target.stats), 'the details line says the same',
		JSON.stringify(tip.details));
	const pct = (100 * target.w / total).toFixed(2) + '%';
	check(tip.text.includes(pct), `the % is the frame's share of the total (${pct})`);

	// click: the frame spans the full width; a frame beside it disappears; reset undoes it
	await page.click(`${sel(target)} rect`, { position: { x: 5, y: 5 } });
	let r = await rectOf(target);
	check(Math.abs(r.x - pad) < 0.02 && Math.abs(r.w - fw) < 0.02,
		'click zooms: the frame spans the full width', JSON.stringify(r));
	const outside = frames.find((f) => f.x + f.w <= target.x || f.x >= target.x + target.w);
	if (outside)
		check(!(await rectOf(outside)).shown, 'frames outside the zoomed one are hidden');
	const below = frames.filter((f) => f.d > target.d && f.x >= target.x &&
		f.x + f.w <= target.x + target.w);
	for (const f of below.slice(0, 5)) {
		r = await rectOf(f);
		check(Math.abs(r.w - f.w / target.w * fw) < 0.02,
			`callee ${f.name} is rescaled with it`, JSON.stringify(r));
	}
	check(await page.isVisible('#reset'), 'a reset button appears');
	await page.click('#reset');
	r = await rectOf(target);
	check(Math.abs(r.x - target.px) < 0.02 && Math.abs(r.w - target.pw) < 0.02,
		'reset restores the full view', JSON.stringify(r));
	check(!(await page.isVisible('#reset')), 'the reset button goes away');

	// search: Ctrl-F focuses the box; matches turn the highlight colour; matched % shown
	const q = searchText || target.name;
	await page.mouse.move(1, 1);
	await page.keyboard.press('Control+f');
	check(await page.evaluate(() => document.activeElement &&
		document.activeElement.id === 'search'), 'Ctrl-F focuses the search box');
	await page.keyboard.type(q);
	const expect = frames.filter((f) => `${f.name} ${f.loc}`.toLowerCase()
		.includes(q.toLowerCase()));
	const got = await page.evaluate(() => Array.from(document.querySelectorAll('#frames > g.m'),
		(g) => ({ fill: getComputedStyle(g.querySelector('rect')).fill })));
	check(expect.length > 0 && got.length === expect.length,
		`"${q}" highlights the ${expect.length} matching frame(s)`, `got ${got.length}`);
	check(got.every((g) => g.fill === 'rgb(214, 30, 214)'),
		'matches are drawn in the highlight colour', JSON.stringify(got.slice(0, 3)));
	// union of the matched spans: recursion counted once
	let sum = 0;
	let end = -1;
	for (const f of expect.slice().sort((a, b) => a.x - b.x || b.w - a.w)) {
		if (f.x + f.w > end) {
			sum += f.x + f.w - Math.max(f.x, end);
			end = f.x + f.w;
		}
	}
	const matched = await page.textContent('#matched');
	const want = `Matched: ${(100 * sum / total).toFixed(2)}%`;
	check(matched.startsWith(want), `the matched share is shown (${want})`, matched);
	await page.keyboard.press('Escape');
	check(await page.evaluate(() => document.querySelectorAll('#frames > g.m').length) === 0,
		'Escape clears the search');

	// a C function's frame: labelled by its name alone (no file), in italics, cool colours
	if (cfunc) {
		const c = frames.find((f) => f.name === cfunc);
		if (check(c, `C function ${cfunc} has a frame`)) {
			const look = await page.evaluate((s) => {
				const g = document.querySelector(s);
				const t = g.querySelector('text');
				const fill = g.querySelector('rect').getAttribute('fill');
				return { cls: g.getAttribute('class'), text: t ? t.textContent : '',
					style: t ? getComputedStyle(t).fontStyle : '',
					blue: parseInt(fill.slice(5, 7), 16) > parseInt(fill.slice(1, 3), 16) };
			}, sel(c));
			check(c.loc === 'C function' && look.cls === 'c',
				'its place is "C function", its class c', JSON.stringify([c.loc, look]));
			check(look.text === cfunc && look.style === 'italic' && look.blue,
				'its label is its name alone, italic, on a cool colour',
				JSON.stringify(look));
		}
	}

	if (threads) {
		const names = frames.filter((f) => f.root && f.d === 1).map((f) => f.name);
		for (const t of threads.split(','))
			check(names.includes(t), `thread "${t}" has its own root`,
				names.join(', '));
	}

	// a wider window: the frames fill it (not a fixed 1200 px), text keeps its size
	const wide = 1700;
	await page.setViewportSize({ width: wide, height: 800 });
	await page.waitForFunction((w) => document.documentElement.viewBox.baseVal.width === w,
		wide, { timeout: 5000 }).catch(() => {});
	const filled = await page.evaluate(() => {
		const svg = document.documentElement;
		const root = document.querySelector('#frames > g rect');
		return { vb: svg.viewBox.baseVal.width, fw: +svg.getAttribute('data-fw'),
			rootW: +root.getAttribute('width'),
			box: svg.getBoundingClientRect().width,
			font: getComputedStyle(document.getElementById('title')).fontSize,
			titleX: +document.getElementById('title').getAttribute('x') };
	});
	check(filled.vb === wide && Math.abs(filled.box - wide) < 1 &&
		Math.abs(filled.rootW - (wide - 2 * pad)) < 0.02 && filled.fw === wide - 2 * pad,
		`a ${wide} px window is filled by the frames`, JSON.stringify(filled));
	check(filled.titleX === wide / 2 && filled.font === '17px',
		'the title stays centred and its text size unchanged', JSON.stringify(filled));
	r = await rectOf(target);
	check(Math.abs(r.w - target.w / total * (wide - 2 * pad)) < 0.02,
		'a frame keeps its share of the wider width', JSON.stringify(r));

	// a screenshot with a picture in it: many colours, no single one covering nearly all
	// fullPage never finishes on an SVG document (no body to measure): size the viewport
	const size = await page.evaluate(() => [document.documentElement.width.baseVal.value,
		document.documentElement.height.baseVal.value]);
	await page.setViewportSize({ width: Math.ceil(size[0]),
		height: Math.min(Math.ceil(size[1]), 4000) });
	const png = await page.screenshot();
	if (shot)
		writeFileSync(shot, png);
	const blank = await context.newPage();
	const stats = await blank.evaluate(async (b64) => {
		const img = new Image();
		img.src = 'data:image/png;base64,' + b64;
		await img.decode();
		const c = document.createElement('canvas');
		c.width = img.width;
		c.height = img.height;
		const ctx = c.getContext('2d');
		ctx.drawImage(img, 0, 0);
		const px = ctx.getImageData(0, 0, c.width, c.height).data;
		const counts = new Map();
		for (let i = 0; i < px.length; i += 4) {
			const k = (px[i] << 16) | (px[i + 1] << 8) | px[i + 2];
			counts.set(k, (counts.get(k) || 0) + 1);
		}
		const top = Math.max(...counts.values()) / (px.length / 4);
		return { colours: counts.size, top };
	}, png.toString('base64'));
	check(stats.colours >= 16 && stats.top < 0.95, 'the screenshot is not blank',
		JSON.stringify(stats));
	await blank.close();
} catch (e) {
	check(false, 'the browser session', e.message);
} finally {
	await context.close();
	rmSync(profileDir, { recursive: true, force: true });
}
check(errors.length === 0, 'no page error, console error or outside request', errors.join('; '));
console.log(`${n - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
