import {
  LONG_FORM_PRICES,
  localPerSecondPrice,
  priceLongForm,
  pricePerSecond,
  validateModelInput,
} from '../../../src/contract';

/**
 * The spec's long-form price table, copied by hand (not imported), so a typo in
 * src/contract/pricing.ts fails a cell here.
 *
 * | Duration (s) | 480p standard | 480p ultra-fast | 720p standard | 720p ultra-fast |
 */
const SPEC_TABLE: Array<[duration: string, p480std: number, p480fast: number, p720std: number, p720fast: number]> = [
  ['4', 80, 125, 170, 245],
  ['5', 100, 155, 210, 305],
  ['10', 195, 305, 420, 610],
  ['15', 295, 460, 625, 915],
  ['20', 390, 610, 835, 1220],
  ['25', 485, 765, 1040, 1525],
  ['30', 585, 915, 1250, 1830],
];

const COLUMNS = [
  ['480p', 'standard'],
  ['480p', 'ultra-fast'],
  ['720p', 'standard'],
  ['720p', 'ultra-fast'],
] as const;

const CELLS = SPEC_TABLE.flatMap(([duration, ...prices]) =>
  COLUMNS.map(([resolution, speed], column) => ({ duration, resolution, speed, credits: prices[column] as number })),
);

type PriceInput = Parameters<typeof priceLongForm>[0];

describe('long-form price table', () => {
  it('has 28 cells in the spec copy', () => {
    expect(CELLS).toHaveLength(28);
  });

  it.each(CELLS)(
    '$duration s, $resolution, $speed costs $credits credits',
    ({ duration, resolution, speed, credits }) => {
      expect(priceLongForm({ duration, resolution, processing_speed: speed } as PriceInput)).toBe(credits);
    },
  );

  it('the exported table holds exactly the spec cells, no more', () => {
    const exported = Object.entries(LONG_FORM_PRICES).flatMap(([duration, row]) =>
      Object.entries(row).map(([column, credits]) => `${duration} ${column} ${credits}`),
    );
    expect(exported.sort()).toEqual(CELLS.map((c) => `${c.duration} ${c.resolution} ${c.speed} ${c.credits}`).sort());
  });

  it('covers every duration the input schema accepts, and only those', () => {
    const durations = ['3', '4', '5', '6', '10', '15', '20', '25', '30', '35'];
    const accepted = durations.filter(
      (duration) =>
        validateModelInput('service-video-cinema-long-form-from-references', { image_urls: [], duration }).ok,
    );
    expect(accepted).toEqual(Object.keys(LONG_FORM_PRICES).sort((a, b) => Number(a) - Number(b)));
  });
});

describe('long-form defaults (4 s, 480p, standard)', () => {
  it('prices a request without duration, resolution or speed at 80', () => {
    expect(priceLongForm({})).toBe(80);
  });

  it.each([
    [{ duration: '10' }, 195],
    [{ resolution: '720p' }, 170],
    [{ processing_speed: 'ultra-fast' }, 125],
    [{ duration: '30', resolution: '720p' }, 1250],
    [{ duration: '20', processing_speed: 'ultra-fast' }, 610],
    [{ resolution: '720p', processing_speed: 'ultra-fast' }, 245],
  ] as Array<[PriceInput, number]>)('fills the missing fields of %p (%i credits)', (input, credits) => {
    expect(priceLongForm(input)).toBe(credits);
  });

  it('prices a full validated input the same way (extra fields do not matter)', () => {
    const result = validateModelInput('service-video-cinema-long-form-from-references', {
      image_urls: ['https://cdn.example.com/a.png'],
      prompt: 'x',
      duration: '15',
      resolution: '720p',
      sound: true,
    });
    if (!result.ok) throw new Error('fixture should validate');
    expect(priceLongForm(result.value)).toBe(625);
  });
});

describe('per-second pricing (local rates)', () => {
  it('charges whole seconds exactly', () => {
    expect(pricePerSecond(6, 10)).toBe(60);
  });

  it('rounds a partial second up', () => {
    expect(pricePerSecond(6, 10.2)).toBe(66);
  });

  it('charges at least one second', () => {
    expect(pricePerSecond(2, 0)).toBe(2);
    expect(pricePerSecond(2, 0.3)).toBe(2);
  });
});

describe('localPerSecondPrice', () => {
  it("prices at the input's speed, standard when the input names none", () => {
    expect(localPerSecondPrice('service-horizon-studio', {}, 10)).toBe(60);
    expect(localPerSecondPrice('service-horizon-studio', { processing_speed: 'ultra-fast' }, 10)).toBe(90);
    expect(localPerSecondPrice('service-upscale-video-fast', { processing_speed: 'standard' }, 4.5)).toBe(10);
  });

  it('has no figure for a model the local service does not price per second', () => {
    expect(localPerSecondPrice('service-video-cinema-long-form-from-references', {}, 10)).toBeUndefined();
  });
});
