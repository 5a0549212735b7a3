import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium, screenshot } from '../helpers/browser.js';
import { hasProgram } from '../helpers/daemons.js';
import { wav, webmClip } from '../helpers/media.js';
import { openWebSession, type WebSession } from '../helpers/web-session.js';

const SRT = '1\r\n00:00:00,000 --> 00:00:01,000\r\nHello from the SRT\r\n\r\n2\r\n00:00:01,000 --> 00:00:02,000\r\nSecond line\r\n';
const ASS = `[Script Info]
ScriptType: v4.00+

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:00.00,0:00:01.50,Default,,0,0,0,,Spoken in ASS
`;

const enabled = requireChromium('the video and audio player browser tests');
const hasFfmpeg = hasProgram('ffmpeg');
if (!hasFfmpeg && process.env.CI) throw new Error('CI needs ffmpeg for the video player tests (.ci/packages.sh installs it)');

describe.runIf(enabled && hasFfmpeg)('video and audio players', () => {
  let w: WebSession;
  const video = () => w.page.locator('[data-testid=preview-video] video');

  beforeAll(async () => {
    const bytes = webmClip();
    w = await openWebSession({
      'media/clip.webm': bytes,
      'media/clip.srt': SRT,
      'media/dub.webm': bytes,
      'media/dub.ass': ASS,
      'plain/solo.webm': bytes,
      'music/a.wav': wav(1),
      'music/b.wav': wav(1),
    });
    // the 2 s clip must not play by itself: once it ended, auto-next would open the next video
    // while a test still looks at this one (a loaded machine takes longer than 2 s over a test)
    expect((await w.s.api('POST', '/api/admin/setting/save', { token: w.admin, body: [{ key: 'video_autoplay', value: 'false' }] })).code).toBe(200);
  });
  afterAll(() => w?.close());

  const cueTexts = () => video().evaluate((v: HTMLVideoElement) => [...v.textTracks].flatMap((tr) => [...(tr.cues ?? [])].map((c) => (c as VTTCue).text)));
  const seek = (s: number) => video().evaluate((v: HTMLVideoElement, to) => new Promise<void>((r) => {
    v.addEventListener('seeked', () => r(), { once: true });
    v.currentTime = to;
  }), s);

  it('loads the .srt beside the video as a converted track and shows its cue', async () => {
    await w.page.goto(`${w.base}/media/clip.webm`);
    await expect.poll(() => video().evaluate((v: HTMLVideoElement) => v.readyState >= 1 && v.videoWidth)).toBe(160);
    await expect.poll(cueTexts).toEqual(['Hello from the SRT', 'Second line']);
    await seek(1.4);
    await expect.poll(() => w.page.locator('.art-subtitle').innerText()).toBe('Second line');
    expect(await w.page.locator('[data-testid=subtitle-files]').textContent()).toContain('clip.srt');
    await screenshot(w.page, '61-video-subtitles');
  });

  it('converts an .ass subtitle too', async () => {
    await w.page.goto(`${w.base}/media/dub.webm`);
    await expect.poll(cueTexts).toEqual(['Spoken in ASS']);
    await seek(0.5);
    await expect.poll(() => w.page.locator('.art-subtitle').innerText()).toBe('Spoken in ASS');
  });

  it('changes the playback speed from the player settings', async () => {
    await w.page.locator('.art-video-player').hover();
    await w.page.locator('.art-control-setting').click();
    await w.page.locator('.art-setting-item', { hasText: /speed/i }).click();
    await w.page.locator('.art-setting-item', { hasText: '1.5' }).click();
    await expect.poll(() => video().evaluate((v: HTMLVideoElement) => v.playbackRate)).toBe(1.5);
  });

  it('offers picture-in-picture', async () => {
    expect(await w.page.locator('.art-control-pip').count()).toBe(1);
    await w.page.locator('.art-control-pip').click();
    await expect.poll(() => w.page.evaluate(() => document.pictureInPictureElement?.tagName ?? 'none')).toBe('VIDEO');
    await w.page.evaluate(() => document.exitPictureInPicture());
  });

  it('lists the folder as a playlist and links external players to the raw link', async () => {
    expect(await w.page.locator('[data-testid=playlist] a').allTextContents()).toEqual(['clip.webm', 'dub.webm']);
    const raw = await w.page.evaluate(() => fetch('/api/fs/get', { method: 'POST', headers: { Authorization: localStorage.getItem('token')!, 'Content-Type': 'application/json' }, body: JSON.stringify({ path: '/media/dub.webm' }) }).then((r) => r.json()));
    const link = raw.data.raw_url as string;
    expect(await w.page.locator('.external-players a[data-player=VLC]').getAttribute('href')).toBe(`vlc://${link}`);
    expect(await w.page.locator('.external-players a[data-player=IINA]').getAttribute('href')).toBe(`iina://weblink?url=${encodeURIComponent(link)}`);
    expect(await w.page.locator('.external-players a').count()).toBeGreaterThanOrEqual(10);
    await w.page.locator('[data-testid=playlist] a', { hasText: 'clip.webm' }).click();
    await w.page.waitForURL(/\/media\/clip\.webm$/);
  });

  it('plays audio with a playlist and goes on to the next file when one ends', async () => {
    await w.page.goto(`${w.base}/music/a.wav`);
    const audio = w.page.locator('[data-testid=preview-audio] video');
    await expect.poll(() => audio.evaluate((a: HTMLMediaElement) => a.readyState >= 1 && Math.round(a.duration))).toBe(1);
    expect(await w.page.locator('[data-testid=playlist] a').allTextContents()).toEqual(['a.wav', 'b.wav']);
    expect(await w.page.locator('[data-testid=auto-next]').isChecked()).toBe(true);
    await audio.evaluate((a: HTMLMediaElement) => {
      a.muted = true;
      a.currentTime = 0.8;
      return a.play();
    });
    await w.page.waitForURL(/\/music\/b\.wav$/);
    await w.page.locator('[data-testid=playlist] li.current', { hasText: 'b.wav' }).waitFor();
  });

  it('speaks the page language in the player too', async () => {
    await w.page.evaluate(() => window.localStorage.setItem('lang', 'de'));
    await w.page.goto(`${w.base}/media/clip.webm`);
    await w.page.locator('.art-video-player').hover();
    await w.page.locator('.art-control-setting').click();
    await w.page.locator('.art-setting-item', { hasText: 'Wiedergabetempo' }).waitFor();
    expect(await w.page.locator('[data-testid=playlist]').getAttribute('aria-label')).toBe('Wiedergabeliste');
    await w.page.evaluate(() => window.localStorage.removeItem('lang'));
  });

  // the loaded track's cue start times, to the millisecond
  const cueStarts = () => video().evaluate((v: HTMLVideoElement) => [...v.textTracks].flatMap((tr) => [...(tr.cues ?? [])].map((c) => Math.round(c.startTime * 1000) / 1000)));
  const offsetShown = () => w.page.locator('[data-testid=subtitle-offset]').textContent();

  it('moves the subtitles in 0.1 s steps from the buttons and the keys, and keeps the offset over a reload', async () => {
    await w.page.evaluate(() => window.localStorage.removeItem('subtitle-offset'));
    await w.page.goto(`${w.base}/media/clip.webm`);
    await expect.poll(() => video().evaluate((v: HTMLVideoElement) => v.duration)).toBeGreaterThan(1.9);
    await expect.poll(cueStarts).toEqual([0, 1]);
    expect(await offsetShown()).toBe('0 s');
    for (let i = 0; i < 3; i++) await w.page.click('[data-testid=subtitle-later]');
    expect(await offsetShown()).toBe('+0.3 s');
    await expect.poll(cueStarts).toEqual([0.3, 1.3]);
    // at 1.2 s the first cue, moved 0.3 s later, is the one shown (without the offset: the second)
    await seek(1.2);
    await expect.poll(() => w.page.locator('.art-subtitle').innerText()).toBe('Hello from the SRT');
    // Z earlier, X later, from the keyboard
    await w.page.locator('[data-testid=subtitle-later]').focus();
    await w.page.keyboard.press('z');
    await w.page.keyboard.press('z');
    await w.page.keyboard.press('z');
    await w.page.keyboard.press('z');
    await w.page.keyboard.press('x');
    expect(await offsetShown()).toBe('0 s');
    await expect.poll(cueStarts).toEqual([0, 1]);
    await w.page.click('[data-testid=subtitle-earlier]');
    await w.page.click('[data-testid=subtitle-earlier]');
    expect(await offsetShown()).toBe('−0.2 s');
    // the first cue cannot start before 0: it stays at 0 and the second moves
    await expect.poll(cueStarts).toEqual([0, 0.8]);
    expect(await w.page.evaluate(() => window.localStorage.getItem('subtitle-offset'))).toBe('-0.2');
    // the offset is this browser's: a reload applies it to the newly loaded track
    await w.page.reload();
    await expect.poll(offsetShown).toBe('−0.2 s');
    await expect.poll(cueStarts).toEqual([0, 0.8]);
    await w.page.click('[data-testid=subtitle-offset-reset]');
    await expect.poll(cueStarts).toEqual([0, 1]);
    expect(await w.page.evaluate(() => window.localStorage.getItem('subtitle-offset'))).toBe('0');
  });

  it('mirrors the video with the flip toggle, from the keyboard too', async () => {
    const flip = w.page.locator('[data-testid=flip]');
    const transform = () => video().evaluate((v: HTMLVideoElement) => getComputedStyle(v).transform);
    expect(await flip.getAttribute('aria-pressed')).toBe('false');
    expect(await transform()).toBe('none');
    await flip.click();
    expect(await flip.getAttribute('aria-pressed')).toBe('true');
    expect(await transform()).toBe('matrix(-1, 0, 0, 1, 0, 0)');
    await flip.focus();
    await w.page.keyboard.press('Enter');
    expect(await flip.getAttribute('aria-pressed')).toBe('false');
    expect(await transform()).toBe('none');
    await w.page.keyboard.press('Space');
    expect(await transform()).toBe('matrix(-1, 0, 0, 1, 0, 0)');
    // a video without subtitles has the flip but no offset
    await w.page.goto(`${w.base}/plain/solo.webm`);
    await w.page.locator('[data-testid=flip]').waitFor();
    expect(await w.page.locator('[data-testid=subtitle-offset]').count()).toBe(0);
    // and a new video starts unflipped
    expect(await w.page.locator('[data-testid=flip]').getAttribute('aria-pressed')).toBe('false');
  });
});
