/**
 * The news ticker tagger on the real SEC map (fixtures/real, 2025-12-14). Every sentence below is
 * hand-written for this test, not a real headline; the real-headline evaluation is bench/tagging.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CompanyMap } from '../src/tickers/company-map.js';
import { coreName, Tagger } from '../src/tickers/tagger.js';

const map = CompanyMap.parse(readFileSync(new URL('../../fixtures/real/sec-company_tickers_exchange-2025-12-14.json', import.meta.url), 'utf8'));
const tagger = new Tagger(map, { names: true });
const tag = (s: string) => tagger.tag(s);

describe('the ticker tagger (hand-written sentences)', () => {
  test('exchange-qualified mentions, US venues only', () => {
    assert.deepEqual(tag('Acme signs a supply deal with NVIDIA (NASDAQ: NVDA) and IBM (NYSE:IBM)'), ['NVDA', 'IBM']);
    assert.deepEqual(tag('Listed as NYSE: IBM and Nasdaq:AAPL'), ['IBM', 'AAPL']);
    assert.deepEqual(tag('Deutsche Telekom (OTC: DTEGY) reports'), ['DTEGY']);
    assert.deepEqual(tag('Explorer (NYSE American: UEC) drills new holes'), ['UEC']);
    assert.deepEqual(tag('Miner lists in Toronto (TSX: ABX) and London (LSE: BP)'), []);
    assert.deepEqual(tag('Unknown issuer (NASDAQ: ZZZZQ) files'), [], 'a ticker the map lacks');
  });

  test('cashtags, but not money', () => {
    assert.deepEqual(tag('$NVDA and $TSLA lead; $5 stock and a $1.2B deal; $BTC flat'), ['NVDA', 'TSLA']);
    assert.deepEqual(tag('$BRK.B rises'), ['BRK-B']);
  });

  test('bare upper-case tickers are not tagged', () => {
    assert.deepEqual(tag('A new IT policy is ON for ALL staff'), []);
  });

  test('names: legal suffixes, possessives, punctuation, share classes', () => {
    assert.deepEqual(coreName('NVIDIA CORP'), ['nvidia']);
    assert.deepEqual(coreName('ELI LILLY & Co'), ['eli', 'lilly']);
    assert.deepEqual(coreName('ABM INDUSTRIES INC /DE/'), ['abm', 'industries']);
    assert.deepEqual(tag("Nvidia's new chip ships"), ['NVDA']);
    assert.deepEqual(tag('Microsoft and Amazon.com Inc. sign a cloud deal'), ['MSFT', 'AMZN']);
    assert.deepEqual(tag('Johnson & Johnson recalls a batch'), ['JNJ']);
    assert.deepEqual(tag('Coca-Cola sales grow'), ['KO']);
    assert.deepEqual(tag('Google parent Alphabet Inc. beats estimates'), ['GOOGL'], 'first-listed share class');
    assert.deepEqual(tag('Agilent withdraws guidance'), ['A'], 'the name without its descriptor (Technologies)');
  });

  test('longest match wins', () => {
    assert.deepEqual(tag('Bank of America raises its dividend'), ['BAC']);
    assert.deepEqual(tag('General Motors stock rises'), ['GM']);
    assert.deepEqual(tag('General Motors recalls trucks'), [], 'two everyday words, no market context');
  });

  test('order of first mention, deduplicated', () => {
    assert.deepEqual(tag('Tesla (NASDAQ: TSLA) beats Nvidia; Tesla shares rise, $NVDA flat'), ['TSLA', 'NVDA']);
  });

  test('everyday-word names need market context', () => {
    assert.deepEqual(tag('Target raises forecast as shares jump'), ['TGT']);
    assert.deepEqual(tag('Archers hit the target again'), []);
    assert.deepEqual(tag('Hit The Target With These Stocks'), [], 'led by an article');
    assert.deepEqual(tag('Analyst lifts price target on Microsoft'), ['MSFT'], 'price target is not Target');
    assert.deepEqual(tag('Apple shares fall after earnings'), ['AAPL']);
    assert.deepEqual(tag('apple pie recipe for the holidays'), []);
    assert.deepEqual(tag('Apple pie recipe for the holidays'), [], 'capitalised but no market context');
    assert.deepEqual(tag('Visa stock rises'), ['V']);
    assert.deepEqual(tag('Travel visa rules tighten'), []);
    assert.deepEqual(tag('Ford shares slide after recall'), ['F']);
    assert.deepEqual(tag('Ford recalls 100,000 vehicles'), [], 'no market context: not enough for an everyday word');
    assert.deepEqual(tag('Shell plc weighs a buyback'), ['SHEL']);
    assert.deepEqual(tag('the shell company filed late'), []);
  });

  test('generic and short names are never tagged by name alone', () => {
    assert.deepEqual(tag('Stocks rally on Monday as energy and capital markets rise'), []);
    assert.deepEqual(tag('Abm industries wins a contract'), [], 'short and generic words, no support');
    assert.deepEqual(tag('ABM Industries wins a contract'), ['ABM'], 'the ticker written out supports the name');
    assert.deepEqual(tag('Facility firm (NYSE: ABM) wins a contract'), ['ABM']);
  });
});
