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
    assert.deepEqual(tag('General Motors recalls trucks'), ['GM'], 'an everyday word followed by a word naming a business');
  });

  test('order of first mention, deduplicated', () => {
    assert.deepEqual(tag('Tesla (NASDAQ: TSLA) beats Nvidia; Tesla shares rise, $NVDA flat'), ['TSLA', 'NVDA']);
  });

  test('everyday-word names need strong support; market context is not enough', () => {
    // market context alone no longer tags an everyday word (it did before: title-case headlines
    // capitalise every word, and financial news always has market context)
    assert.deepEqual(tag('Target raises forecast as shares jump'), []);
    assert.deepEqual(tag('Target Raises Forecast As Shares Jump'), [], 'Target is not among the hundred largest');
    assert.deepEqual(tag('Ford shares slide after recall'), []);
    assert.deepEqual(tag('Here Are 3 Stocks to Buy Now as Earnings Soar'), []);
    assert.deepEqual(tag('Chief Strategy Officer named as stock rises'), []);
    // the company's own ticker, bare, cashtag or exchange-qualified
    assert.deepEqual(tag('Target (NYSE: TGT) raises forecast as shares jump'), ['TGT']);
    assert.deepEqual(tag('TGT: Target raises its forecast'), ['TGT']);
    assert.deepEqual(tag('Target beats, $TGT jumps'), ['TGT']);
    // a legal suffix right after the whole name, not after a shortened form
    assert.deepEqual(tag('Strategy Inc buys more bitcoin'), ['MSTR']);
    assert.deepEqual(tag('Shell plc weighs a buyback'), ['SHEL']);
    assert.deepEqual(tag('Net Element, Inc. investors sue the company'), [], 'Element is Element Solutions shortened');
    // the owner of a listing
    assert.deepEqual(tag("Why Apple's Stock Is Trading Higher Today"), ['AAPL']);
    // capitalised mid-sentence in sentence-case prose (a summary under a title-case headline)
    assert.deepEqual(tag('Retailers Report Holiday Sales. Shares of Target rose after the retailer raised its forecast.'), ['TGT']);
    assert.deepEqual(tag('Tech stocks slide. Analysts said shares of Apple and Target fell on Tuesday.'), ['AAPL', 'TGT']);
    assert.deepEqual(tag('Target Raises Forecast. Target raised its forecast on Tuesday.'), [], 'a capital at a sentence start proves nothing');
    assert.deepEqual(tag('Fund managers said Circle shares rose on Tuesday.'), [], "an OTC company's everyday name needs its ticker or legal form");
    assert.deepEqual(tag('Microsoft Shares Rise. Investors cheered as Bill Gates spoke about the stock.'), ['MSFT'], "part of a person's name");
    assert.deepEqual(tag('Revenue climbed to $67.4 Billion in the quarter, the company said.'), [], 'a quantity');
    // the negative cases of before
    assert.deepEqual(tag('Archers hit the target again'), []);
    assert.deepEqual(tag('Hit The Target With These Stocks'), [], 'led by an article');
    assert.deepEqual(tag('Analyst lifts price target on Microsoft'), ['MSFT'], 'price target is not Target');
    assert.deepEqual(tag('apple pie recipe for the holidays'), []);
    assert.deepEqual(tag('Apple pie recipe for the holidays'), []);
    assert.deepEqual(tag('Travel visa rules tighten'), []);
    assert.deepEqual(tag('the shell company filed late'), []);
  });

  test("the largest companies' everyday names, capitalised, are the companies", () => {
    // SEC's map lists the largest companies first; the hundred largest are what news means by these
    assert.deepEqual(tag('Apple Shares Fall After Earnings'), ['AAPL']);
    assert.deepEqual(tag('Visa stock rises. Payments volume at Visa grew'), ['V']);
    assert.deepEqual(tag('Shares of Amazon, Meta and Oracle lead the market'), ['AMZN', 'META', 'ORCL']);
    // but not where the word reads as a word or as part of another name
    assert.deepEqual(tag('Apple shares fall after earnings'), [], 'a sentence start in sentence case');
    assert.deepEqual(tag('Apple pie recipe for the holidays'), []);
    assert.deepEqual(tag('Travel visa rules tighten'), []);
    assert.deepEqual(tag('Big Tech Employs Most H-1B Visa Workers'), [], 'a thing with a number in its name');
    assert.deepEqual(tag('A weekend in the city. Tourists love the Big Apple in the fall.'), [], 'part of another proper noun');
    assert.deepEqual(tag('Hit The Target With These Stocks'), []);
  });

  test("the largest companies' tickers in capitals, and the names the news uses for them", () => {
    assert.deepEqual(tag('IBM and AMD unveil new chips'), ['IBM', 'AMD']);
    assert.deepEqual(tag('Google and Facebook face a new probe'), ['GOOGL', 'META']);
    assert.deepEqual(tag('A CAT scan, and a SPY novel'), [], 'tickers that are words of the language');
    assert.deepEqual(tag('Hackers hit a CRM vendor and a SAN array'), [], 'three letters that are not the name or its initials: acronyms');
    assert.deepEqual(tag('IBM AND AMD UNVEIL NEW CHIPS'), [], 'all capitals: every word looks like a ticker');
    assert.deepEqual(tag('Amazon Tightens Grip As E-Commerce Accelerates: JPMorgan Sees Upside'), ['AMZN'], 'a bank as the analyst');
  });

  test('dictionary words and everyday phrases', () => {
    // not in the hand-written COMMON list, but ordinary words of the dictionary list
    assert.deepEqual(tag('Partner Shares Jump. The firm named a new partner as its stock rose.'), []);
    assert.deepEqual(tag('Quantum Computing shares soar'), [], 'two everyday words read as a phrase');
    assert.deepEqual(tag('Quantum Computing Inc. shares soar'), ['QUBT']);
    assert.deepEqual(tag('Nvidia Is the Top Artificial Intelligence Stock'), ['NVDA'], 'a shortened form made of everyday words is never a name');
    assert.deepEqual(tag('Arbor Realty raises its dividend'), ['ABR'], 'the second word names a business');
  });

  test('a surname in prose is not a company', () => {
    assert.deepEqual(tag('Fed Holds Rates. Investors listened closely to Jerome Powell on Wednesday as stocks fell.'), []);
    assert.deepEqual(tag('Powell Industries wins an order'), ['POWL']);
  });

  test("a person's name is not a company, in title case too", () => {
    // after a given name, a company's name is a surname
    assert.deepEqual(tag("Carl Icahn's Funds Lag The Market"), []);
    assert.deepEqual(tag('Milton Hershey School Opens A Campus'), []);
    assert.deepEqual(tag('Icahn Enterprises Cuts Its Dividend'), ['IEP']);
    // a company named with a given name needs support like an everyday word
    assert.deepEqual(tag('Dana White Joins The Board'), []);
    assert.deepEqual(tag('Dana Inc. raises its outlook'), ['DAN']);
  });

  test('names that mean something else', () => {
    assert.deepEqual(tag('Solana Rallies As Bitcoin Stalls'), [], 'a coin, not Solana Co');
    assert.deepEqual(tag('FTC Files Amicus Brief In Drug Case'), [], 'a word of the law, not Amicus Therapeutics');
    assert.deepEqual(tag('Regulators Warn Ballad Health COPA Could Expire'), [], 'an acronym, not Copa Holdings');
    assert.deepEqual(tag('Copa Holdings Adds Routes'), ['CPA']);
    assert.deepEqual(tag('ASML Ships More Machines'), ['ASML'], 'SEC writes it in capitals too');
    assert.deepEqual(tag('CITY OF HOPE NAMES A NEW CHAIR'), [], 'an upper-case name is not its own ticker');
    assert.deepEqual(tag('Solaris Energy Infrastructure Wins A Contract'), ['SEI']);
    assert.deepEqual(tag('SOLARIS ENERGY ALERT: Investors Contact The Firm'), [], 'not Solaris Resources: another descriptor follows');
    assert.deepEqual(tag('Agilent Tech Reports Earnings'), ['A'], "an abbreviation of the company's own descriptor");
    assert.deepEqual(tag('Cuts Down On Semiconductor Stocks'), [], 'a name led by a word title case capitalises anyway');
    assert.deepEqual(tag('Billionaire Ray Dalio’s Bridgewater Trims Holdings'), [], 'a bank without its descriptor is a town');
  });

  test('a story: names in its headline, exchange mentions and cashtags in its summary too', () => {
    assert.deepEqual(tagger.tagStory('Nvidia beats estimates', 'Analysts at Morgan Stanley said demand for Microsoft and $AMD rose.'), ['NVDA', 'AMD']);
    assert.deepEqual(tagger.tagStory('Chip stocks rise', 'Tesla (NASDAQ: TSLA) and Intel rose.'), ['TSLA']);
  });

  test('generic and short names are never tagged by name alone', () => {
    assert.deepEqual(tag('Stocks rally on Monday as energy and capital markets rise'), []);
    assert.deepEqual(tag('Abm industries wins a contract'), [], 'short and generic words, no support');
    assert.deepEqual(tag('ABM Industries wins a contract'), ['ABM'], 'the ticker written out supports the name');
    assert.deepEqual(tag('Facility firm (NYSE: ABM) wins a contract'), ['ABM']);
  });
});
