/**
 * Tags a news headline or summary with the US-listed tickers it is about, from SEC's company map
 * alone (plus the generic word lists below). A wrong ticker costs a trading bot money and a missing
 * one costs it a story, so every rule here gives up recall for precision where the two pull apart.
 *
 * Rules, and why:
 * - An exchange-qualified mention (`(NASDAQ: NVDA)`, `NYSE:IBM`, `(NYSE American: X)`, `(OTC: X)`) is
 *   the issuer naming its own listing, the most reliable signal there is: tagged when the ticker is in
 *   the map. Foreign venues (TSX, LSE, ASX, ...) name a foreign line, which a US bot must not trade.
 * - A cashtag (`$NVDA`) is an author's deliberate pointer to a listing; tagged when upper-case and in
 *   the map. `$5`, `$1.2B` start with a digit and are money; crypto symbols (`$BTC`) are coins even
 *   where an ETF happens to trade under the same letters.
 * - A bare upper-case ticker (`A`, `IT`, `ON`, `ALL`) is not tagged on its own: too many tickers are
 *   words or abbreviations. It counts as support for a name that needs it (below), and the largest
 *   companies' tickers that are no word are the one exception ("IBM").
 * - Company names: SEC's names carry legal and registration noise (`Inc.`, `& Co`, `/DE/`, `N.V.`) that
 *   writers drop, so names and text are reduced to the same word tokens (case, punctuation, accents and
 *   possessive `'s` removed) and the distinctive core is matched as whole words. A core that ends in a
 *   generic descriptor (`Technologies`, `Pharmaceuticals`, ...) is also matched without it, since
 *   writers say "Agilent" for Agilent Technologies. Longest match wins ("Bank of America" over
 *   "America"), so a longer name always owns its words.
 * - A name that two different companies reduce to is tagged for neither: guessing between them is a
 *   coin flip with money on it. The one exception: when exactly one of them trades on a national
 *   exchange and the others are OTC or unlisted, news means the listed one ("Target" is Target Corp,
 *   not the OTC shell Target Group Inc.). A company with several share classes is one CIK and gets its
 *   first-listed ticker (GOOGL for Alphabet).
 * - Names whose core is short (3 letters or fewer) or a generic business word ("First", "Capital",
 *   "Energy") are never tagged by name: they occur in every other headline.
 * - A core that is an everyday English word (Target, Visa, Apple, Here, Strategy, Partner, Billion...), or a
 *   two-word core made only of such words ("Quantum Computing", "Best Buy"), is tagged only with STRONG
 *   support. "Everyday" is the hand-written COMMON list below or a word that a common-English dictionary
 *   lists in lower case (SCOWL size 35, generated into everyday-words.ts by scripts/everyday-words.ts;
 *   a dictionary says what is a word of the language, not what a labelled set happened to contain;
 *   the table holds only the dictionary words found in the 2025-12-14 map's names, so a later
 *   company's everyday name counts only if COMMON has it, until the table is regenerated).
 *   Strong support is one of: the company's own ticker in the text (bare, cashtag or exchange-
 *   qualified); a legal form right after the whole name ("Strategy Inc", "Amazon.com Inc.", but not
 *   after a shortened form: "Net Element, Inc." is not Element Solutions); the name as the owner of a
 *   listing ("Apple's stock"); or the name capitalised where prose would not capitalise a common word:
 *   mid-sentence, in a sentence-case sentence (a summary under a headline: at least two lower-case
 *   words that title case would capitalise, and at least half as many as its mid-sentence capitals), not
 *   next to another capitalised word (then it is part of a longer proper noun: "Bill Gates", "Gulf of
 *   Mexico") and not after a number ("$67.4 Billion", "5 Genius Stocks"). In every case the mention
 *   must be capitalised, not led by an article or possessive ("hit the target"), and not part of
 *   "price target". Market context (shares, earnings, an analyst...) is no longer support: financial
 *   news carries it everywhere, and title-case headlines capitalise every word, so together they tagged
 *   "Here Are 3 Stocks to Buy" as Here Group and "Chief Strategy Officer" as Strategy (bench:tagging's
 *   Alpha Vantage set: precision 0.690 with them). The cost is title-only text: "Apple Shares Fall"
 *   alone is not tagged.
 * - A two-word core of everyday words whose second word names a kind of business ("Arbor Realty",
 *   "General Motors"; BUSINESS_NOUNS) is a company name the way "Inc" makes one, and is tagged as a
 *   distinctive name. A shortened form made only of everyday words ("Artificial Intelligence" for
 *   Artificial Intelligence Technology Solutions) is never tagged: it is a phrase of the language.
 * - The hundred largest companies (SEC lists the largest first) are the exception: news writes about
 *   them most, so their everyday-word names ("Apple", "Amazon", "Visa") are tagged when capitalised,
 *   unless the mention reads as the word or as part of another name (`prominentMention`); so are
 *   their tickers written in capitals where no word of the language is ("IBM", "AMD"; not "CAT"),
 *   and the few names the news uses for them that SEC's do not contain (ALIASES: "Google"). An OTC
 *   company's everyday-word name, at the other end, needs its ticker or legal form.
 * - People: a one-word name right after a given name ("Carl Icahn", "Milton Hershey"; Moby's lists of
 *   given names, generated into given-names.ts) or after another capitalised word in sentence-case
 *   prose ("Jerome Powell") is a surname and is not tagged, and a company whose whole name is a given
 *   name ("Dana", "Megan") needs support like an everyday word.
 * - What else a name can be: a coin ("Solana"), an acronym (a four-letter word in capitals, where SEC
 *   writes the company in mixed case: "COPA" is not Copa Holdings), a product ("Galaxy S25"), a
 *   town ("Bridgewater" without "Bancshares") or a sibling company ("Solaris Energy" is not Solaris
 *   Resources): each is a rule below.
 * - A shortened form of a name (the name without its trailing descriptor: "Ford" for Ford Motor) follows
 *   the same classes; it is never formed by cutting a name after its first word in general ("Advance"
 *   for Advance Auto Parts), since a bare first word is more often the word than the company.
 * - Every word of a name mention must carry a capital ("Nvidia", "NVIDIA", "eBay"; linking words like
 *   "of" aside): company names are proper nouns, and a lower-case "regions" or "progressive" is not one.
 *
 * Everything is built once per map in the constructor: tag() tokenises the text once and walks a map
 * from first token to candidate names, so its cost does not grow with the size of the map.
 */
import type { CompanyMap, Listing } from './company-map.js';
import { EVERYDAY_WORDS } from './everyday-words.js';
import { GIVEN_NAMES } from './given-names.js';

/** Legal-form and registration words dropped from the end of SEC names (after tokenising). */
// biome-ignore format: a word list reads better packed
const LEGAL_SUFFIXES = new Set([
  'inc', 'incorporated', 'corp', 'corporation', 'co', 'cos', 'company', 'companies', 'ltd', 'limited', 'plc', 'holdings', 'holding', 'hldgs', 'group', 'grp',
  'nv', 'sa', 'ag', 'se', 'llc', 'lp', 'llp', 'ltda', 'sab', 'cv', 'de', 'spa', 'asa', 'ab', 'oyj', 'bv', 'gmbh', 'kgaa', 'pte', 'pty', 'bhd', 'tbk', 'adr',
  'ads', 'new', 'com', 'the', 'and', 'of', 'partners', 'lp', 'trust', 'fund', 'etf', 'class', 'a', 'b', 'c', 'ordinary', 'shares', 'units', 'unit',
]);

/**
 * Descriptors a writer drops after a distinctive name ("Agilent" for Agilent Technologies). Only
 * used to derive a shorter alias, never matched on their own.
 */
// biome-ignore format: a word list reads better packed
const DESCRIPTORS = new Set([
  'technologies', 'technology', 'tech', 'international', 'intl', 'industries', 'systems', 'pharmaceuticals', 'pharmaceutical', 'pharma', 'therapeutics',
  'biosciences', 'bioscience', 'biotherapeutics', 'biopharma', 'biotech', 'biologics', 'sciences', 'science', 'medical', 'healthcare', 'health', 'brands',
  'entertainment', 'communications', 'networks', 'software', 'semiconductor', 'semiconductors', 'electronics', 'enterprises', 'worldwide', 'global',
  'solutions', 'services', 'resources', 'financial', 'bancorp', 'bancshares', 'motors', 'motor', 'platforms', 'labs', 'laboratories', 'energy', 'oncology',
  'genomics', 'interactive', 'media', 'airlines', 'america', 'usa', 'us', 'north', 'inc', 'corp',
]);

/** Generic business words: a name that is just one of these is never tagged by name. */
// biome-ignore format: a word list reads better packed
const GENERIC = new Set([
  'first', 'american', 'america', 'national', 'general', 'global', 'united', 'international', 'capital', 'energy', 'health', 'healthcare', 'bank', 'bancorp',
  'financial', 'trust', 'income', 'growth', 'value', 'equity', 'fund', 'partners', 'resources', 'technologies', 'technology', 'systems', 'industries',
  'holdings', 'group', 'services', 'solutions', 'therapeutics', 'pharmaceuticals', 'biosciences', 'sciences', 'medical', 'realty', 'properties', 'investors',
  'investment', 'investments', 'securities', 'acquisition', 'acquisitions', 'ventures', 'enterprises', 'brands', 'communications', 'media', 'networks',
  'software', 'digital', 'data', 'cloud', 'mobile', 'wireless', 'semiconductor', 'electronics', 'power', 'oil', 'gas', 'gold', 'silver', 'mining', 'minerals',
  'metals', 'steel', 'water', 'solar', 'wind', 'nuclear', 'lithium', 'uranium', 'bitcoin', 'crypto', 'blockchain', 'ai', 'robotics', 'biotech', 'pharma',
  'insurance', 'assurance', 'reinsurance', 'credit', 'lending', 'mortgage', 'finance', 'payments', 'markets', 'exchange', 'market', 'stock', 'stocks',
  'shares', 'dividend', 'strategic', 'opportunities', 'opportunity', 'select', 'premier', 'premium', 'prime', 'core', 'smart', 'advanced', 'innovative',
  'innovation', 'innovations', 'quantum', 'dynamic', 'dynamics', 'precision', 'pacific', 'atlantic', 'western', 'eastern', 'northern', 'southern', 'central',
  'midwest', 'north', 'south', 'east', 'west', 'world', 'worldwide', 'universal', 'international', 'continental', 'texas', 'california', 'florida', 'new',
  'york', 'china', 'chinese', 'japan', 'india', 'canada', 'canadian', 'british', 'european', 'asia', 'africa', 'mexico', 'brazil', 'korea', 'israel', 'usa',
  'us', 'federal', 'republic', 'liberty', 'freedom', 'patriot', 'eagle', 'pioneer', 'frontier', 'summit', 'pinnacle', 'apex', 'vertex', 'horizon', 'legacy',
  'heritage', 'community', 'citizens', 'peoples', 'people', 'home', 'homes', 'house', 'life', 'care', 'cure', 'bio', 'gene', 'genetics', 'cell', 'cells',
  'immune', 'vision', 'future', 'next', 'new', 'modern', 'green', 'blue', 'red', 'black', 'white', 'golden', 'royal', 'sun', 'star', 'sky', 'ocean', 'river',
  'lake', 'mountain', 'valley', 'bay', 'harbor', 'island', 'park', 'street', 'main', 'city', 'state', 'states', 'county', 'country', 'standard', 'reliance',
  'alliance', 'union', 'security', 'safety', 'transport', 'logistics', 'shipping', 'tankers', 'airlines', 'aviation', 'aerospace', 'defense', 'automotive',
  'auto', 'motors', 'retail', 'foods', 'food', 'beverage', 'restaurants', 'hotels', 'resorts', 'gaming', 'esports', 'entertainment', 'sports', 'education', 'learning',
  'labs', 'research', 'diagnostics', 'devices', 'instruments', 'materials', 'chemicals', 'chemical', 'products', 'industrial', 'manufacturing', 'construction',
  'building', 'builders', 'engineering', 'infrastructure', 'utilities', 'electric', 'utility', 'telecom', 'internet', 'online', 'network', 'platform',
  'platforms', 'reit', 'land', 'real', 'estate', 'office', 'storage', 'towers', 'tower', 'one', 'two', 'three', 'alpha', 'beta', 'delta', 'gamma', 'omega',
  'sigma', 'nova', 'neo', 'max', 'plus', 'pro', 'edge', 'key', 'point', 'bridge', 'gateway', 'link', 'connect', 'direct', 'express', 'service', 'systems',
  'solutions', 'fintech', 'enterprise', 'commerce', 'commercial', 'consumer', 'consumers', 'business', 'management', 'advisors', 'asset', 'assets', 'wealth',
  'savings', 'loan', 'bankshares', 'bancshares', 'financial', 'holdings', 'bancorporation', 'corporation', 'company',
  // market words, places
  // coins and crypto words: a company named for a coin ("Solana Co") is mentioned far less than the coin
  'bitcoin', 'ethereum', 'solana', 'dogecoin', 'cardano', 'polkadot', 'chainlink', 'litecoin', 'tether', 'binance', 'defi', 'web3', 'stablecoin',
  'nasdaq', 'nyse', 'news', 'euro', 'dow', 'taiwan', 'indonesia', 'miami', 'cincinnati', 'kyoto', 'bogota', 'oxford', 'princeton',
  'harvard', 'albany', 'basel', 'denali', 'dixie', 'sonoma', 'salem', 'cardiff', 'columbia', 'huntington', 'lakeside', 'hillcrest', 'northfield', 'riverview',
  'westwood', 'melrose', 'norwood', 'seneca', 'cambridge', 'chicago', 'boston', 'dallas', 'houston', 'atlanta', 'denver', 'phoenix', 'seattle', 'portland',
  'london', 'paris', 'tokyo', 'berlin', 'hong', 'kong', 'singapore', 'shanghai', 'beijing', 'dubai', 'toronto', 'vancouver', 'sydney', 'ohio', 'virginia',
  'carolina', 'georgia', 'arizona', 'nevada', 'oregon', 'alaska', 'hawaii', 'dakota', 'kentucky', 'tennessee', 'alabama', 'michigan', 'illinois', 'indiana',
  'iowa', 'kansas', 'missouri', 'nebraska', 'oklahoma', 'utah', 'colorado', 'wyoming', 'montana', 'idaho', 'maine', 'vermont', 'jersey', 'delaware',
  'maryland', 'louisiana', 'arkansas', 'mississippi', 'wisconsin', 'minnesota', 'pennsylvania', 'massachusetts', 'connecticut', 'europe', 'german', 'germany',
  'france', 'french', 'italy', 'spain', 'swiss', 'sweden', 'norway', 'denmark', 'finland', 'ireland', 'irish', 'scotland', 'australia', 'australian',
  'zealand', 'argentina', 'chile', 'peru', 'colombia', 'venezuela', 'russia', 'ukraine', 'turkey', 'egypt', 'nigeria', 'kenya', 'vietnam', 'thailand',
  'malaysia', 'philippines', 'hainan', 'shenzhen', 'guangzhou',
  // calendar words
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august',
  'september', 'october', 'november', 'december', 'today', 'tomorrow', 'weekend',
]);

/**
 * Everyday English words that are also listed companies' names or name parts: such a name is only
 * tagged with support (module header). A generic list written for this purpose, not tuned to any
 * labelled set.
 */
// biome-ignore format: a word list reads better packed
const COMMON = new Set([
  // the everyday words among the best-known US names
  'apple', 'target', 'visa', 'oracle', 'shell', 'gap', 'block', 'snap', 'match', 'progressive', 'ford', 'dollar', 'amazon', 'express', 'alphabet', 'meta',
  'square', 'delta', 'united', 'southwest', 'spirit', 'frontier', 'carnival', 'royal', 'caterpillar', 'pioneer', 'marathon', 'discover', 'principal',
  'travelers', 'globe', 'life', 'equitable', 'root', 'signal', 'zoom', 'slack', 'box', 'unity', 'toast', 'monster', 'beyond', 'post', 'flowers', 'tree',
  'below', 'big', 'lots', 'guess', 'buckle', 'coach', 'under', 'best', 'buy', 'booking', 'choice', 'shift', 'live', 'nation', 'fox', 'charter', 'dish',
  'crown', 'castle', 'public', 'storage', 'extra', 'space', 'cube', 'ball', 'pool', 'carrier', 'agree', 'ladder', 'arbor', 'compass', 'planet', 'fitness',
  'lemonade', 'hippo', 'clover', 'bright', 'chase', 'intuitive', 'applied', 'materials', 'general', 'mills', 'motors', 'electric', 'dynamics',
  // everyday words (nouns, verbs, adjectives) that occur as single-word company names
  'able', 'accent', 'ace', 'acme', 'acorn', 'action', 'active', 'adapt', 'advance', 'advent', 'affinity', 'aim', 'air', 'alert', 'align', 'alive', 'allied',
  'alpine', 'amber', 'anchor', 'angel', 'answer', 'apex', 'arch', 'arena', 'argo', 'ark', 'armada', 'arrow', 'art', 'artisan', 'ascent', 'aspen',
  'aspire', 'asset', 'atlas', 'aurora', 'avalon', 'avenue', 'avid', 'axis', 'badger', 'balance', 'banner', 'baron', 'barrett', 'beacon', 'bear',
  'beam', 'bell', 'benchmark', 'berry', 'birch', 'bird', 'blaze', 'bloom', 'blue', 'bold', 'bolt', 'bond', 'boot', 'boston', 'bow', 'brand', 'brave', 'bridge',
  'brilliant', 'bristol', 'broad', 'brook', 'brown', 'buck', 'builders', 'bull', 'bunker', 'butler', 'cable', 'cadence', 'calm', 'camp', 'canal', 'candle',
  'canopy', 'canyon', 'cardinal', 'care', 'cargo', 'carter', 'cascade', 'catalyst', 'cedar', 'century', 'champion', 'check',
  'cherry', 'chord', 'cinema', 'circle', 'citadel', 'civic', 'clarity', 'classic', 'clean', 'clear', 'clearwater', 'climb', 'cloud', 'coast', 'coastal',
  'cobalt', 'coin', 'colony', 'comfort', 'concord', 'conduit', 'connect', 'constellation', 'copper', 'coral', 'core', 'corner', 'cosmos', 'cotton',
  'courage', 'cousins', 'cove', 'craft', 'crane', 'crest', 'cricket', 'cross', 'crystal', 'cumberland', 'curve', 'cypress', 'dash', 'dawn', 'day',
  'design', 'destiny', 'diamond', 'discovery', 'dominion', 'dover', 'dragon', 'dream', 'drive', 'duke', 'dune', 'dynasty', 'eagle', 'earth', 'echo',
  'eclipse', 'edge', 'element', 'elevate', 'elite', 'ember', 'emerald', 'emerson', 'empire', 'encore', 'endeavor', 'energy', 'enhance', 'ensign', 'envision',
  'epic', 'equity', 'essential', 'evolution', 'evolve', 'excel', 'expand', 'fabric', 'falcon', 'fathom', 'federal', 'fidelity', 'fiesta', 'figure', 'fire',
  'first', 'flag', 'fleet', 'flex', 'flight', 'flow', 'fluent', 'focus', 'force', 'forge', 'form', 'fortress', 'fortune', 'forward', 'fountain',
  'franklin', 'freedom', 'fresh', 'fuel', 'fulcrum', 'fusion', 'future', 'galaxy', 'gambling', 'garden', 'gate', 'gateway', 'gem', 'genesis',
  'giant', 'glacier', 'glory', 'gold', 'golden', 'good', 'grace', 'grand', 'granite', 'graphite', 'gravity', 'great', 'green', 'grid', 'grove', 'guardian',
  'guide', 'gulf', 'hallmark', 'harbor', 'harmony', 'harvest', 'haven', 'hawk', 'health', 'heart', 'helix', 'heritage', 'hero', 'highway', 'hill', 'honest',
  'hope', 'horizon', 'host', 'hub', 'hunter', 'icon', 'ideal', 'ignite', 'image', 'impact', 'independence', 'infinity', 'insight', 'inspire', 'integrity',
  'intrepid', 'iron', 'island', 'ivy', 'jade', 'journey', 'jupiter', 'keystone', 'kinetic', 'king', 'knight', 'lake', 'lakeland', 'landmark', 'laser',
  'latitude', 'launch', 'leader', 'legacy', 'legend', 'level', 'liberty', 'light', 'lightning', 'lion', 'lotus', 'loyalty', 'luna', 'lunar', 'magic', 'magnet',
  'magnolia', 'main', 'majestic', 'maple', 'marine', 'mariner', 'mark', 'marker', 'mars', 'mason', 'master', 'matrix', 'maverick', 'meridian',
  'merit', 'mesa', 'metro', 'midland', 'mill', 'mind', 'mission', 'model', 'momentum', 'monarch', 'moon', 'mosaic', 'motion', 'mustang', 'myriad', 'national',
  'native', 'nature', 'navigator', 'neptune', 'nexus', 'noble', 'north', 'northern', 'nova', 'oak', 'oasis', 'ocean', 'olympic', 'omega', 'open', 'optimum',
  'orbit', 'orchid', 'origin', 'outlook', 'pace', 'palm', 'panther', 'paragon', 'paramount', 'park', 'path', 'patriot', 'peak', 'pearl', 'pebble', 'pelican',
  'penn', 'people', 'phoenix', 'pilgrim', 'pine', 'pinnacle', 'pivot', 'platinum', 'plaza', 'plug', 'point', 'polar', 'portal', 'power',
  'prairie', 'premier', 'presidio', 'pride', 'prime', 'progress', 'prospect', 'providence', 'pulse', 'pure', 'quest', 'radiant', 'rain', 'rainbow', 'ranger',
  'rapid', 'raven', 'ready', 'realty', 'reliance', 'renaissance', 'republic', 'resolute', 'revolution', 'ridge', 'rise', 'river', 'road', 'rock', 'rocket',
  'rogers', 'rose', 'ruby', 'safe', 'safeguard', 'sage', 'sail', 'salt', 'sanctuary', 'saturn', 'scholar', 'scout', 'sea', 'select', 'sentinel', 'sequoia',
  'shadow', 'sharp', 'shield', 'shore', 'sierra', 'signature', 'silver', 'simple', 'sky', 'smart', 'solar', 'solid', 'sonic', 'sound', 'source', 'southern',
  'sovereign', 'spark', 'spectrum', 'sphere', 'spire', 'spring', 'sprout', 'stable', 'standard', 'star', 'state', 'steel', 'sterling', 'stone', 'storm',
  'strategy', 'stream', 'strong', 'summit', 'sun', 'sunrise', 'sunshine', 'superior', 'supreme', 'surge', 'swift', 'synergy', 'talon', 'teton',
  'texas', 'thunder', 'tidal', 'tide', 'tiger', 'timber', 'titan', 'torch', 'tower', 'trade', 'trail', 'transit', 'treasure', 'trend', 'tribune', 'trident',
  'trinity', 'triumph', 'true', 'trust', 'turning', 'twin', 'ultra', 'union', 'unique', 'unit', 'universal', 'valley', 'valor', 'vanguard', 'vector',
  'velocity', 'venture', 'venus', 'verde', 'vertex', 'victory', 'viking', 'village', 'vintage', 'virtue', 'vision', 'vista', 'vital', 'voyager', 'wave',
  'wealth', 'west', 'western', 'whole', 'wild', 'willow', 'wind', 'wing', 'winner', 'wise', 'wolf', 'wonder', 'works', 'world', 'yellow', 'yield', 'zenith',
  'zion', 'zone',
  // more everyday words and common surnames
  'accredited', 'actuate', 'acumen', 'adagio', 'advantage', 'aesthetic', 'alignment', 'allot', 'alps', 'amaze', 'amplify', 'amplitude', 'angle', 'anew',
  'array', 'assembly', 'authentic', 'avant', 'aware', 'awareness', 'bark', 'beauty', 'billion', 'bill', 'blend', 'bone', 'bread', 'broadway', 'bullish',
  'cactus', 'carpenter', 'carriage', 'cars', 'cartesian', 'carver', 'champions', 'charlie', 'charming', 'chart', 'cheer', 'chime', 'chrome', 'click',
  'cluster', 'coffee', 'cognition', 'complete', 'comprehensive', 'context', 'cool', 'cooper', 'credo', 'customers', 'dare', 'dave', 'decent', 'definitive',
  'deluxe', 'designer', 'diploma', 'distribution', 'dole', 'dolphin', 'driven', 'duality', 'elastic', 'embassy', 'emerging', 'employers', 'encompass', 'envoy',
  'epsilon', 'escalade', 'esquire', 'establishment', 'everest', 'exact', 'exponent', 'extreme', 'fate', 'finch', 'flexible', 'fold', 'foresight', 'formula',
  'forte', 'forum', 'fossil', 'founder', 'freight', 'frequency', 'functional', 'fuse', 'gain', 'gates', 'genie', 'genius', 'gifts', 'glimpse', 'glucose',
  'gorilla', 'grab', 'grande', 'gray', 'guided', 'hammer', 'hawthorn', 'hello', 'here', 'hinge', 'idea', 'immersion', 'indie', 'information', 'inhibitor',
  'innovate', 'inspired', 'integer', 'intelligent', 'intensity', 'inter', 'interface', 'intrusion', 'jaguar', 'jasper', 'jazz', 'joint', 'kestrel', 'lattice',
  'lens', 'leopard', 'lineage', 'linkage', 'liquidity', 'longevity', 'lottery', 'lucent', 'lucid', 'mammoth', 'mechanics', 'medallion', 'merchants', 'mercury',
  'milestone', 'mink', 'mint', 'modular', 'molecular', 'monday', 'mystic', 'nice', 'nightingale', 'noodles', 'obsidian', 'odyssey', 'onward', 'opera',
  'orange', 'ovation', 'paid', 'pantheon', 'paradox', 'parks', 'partner', 'pattern', 'penguin', 'perfect', 'perimeter', 'perspective', 'pineapple', 'plexus',
  'poet', 'pony', 'popular', 'predictive', 'prelude', 'priority', 'profound', 'prosperity', 'protagonist', 'proto', 'purple', 'quad', 'radian', 'range',
  'rapport', 'reading', 'recharge', 'recon', 'recursion', 'redwood', 'relativity', 'relay', 'reliability', 'relief', 'renew', 'repay', 'reservoir',
  'restaurant', 'retrieve', 'revelation', 'revolve', 'rhythm', 'ribbon', 'ring', 'riot', 'robin', 'rocky', 'royale', 'royalty', 'rubicon', 'rumble', 'rush',
  'saga', 'screen', 'seaport', 'seek', 'seer', 'senior', 'sensei', 'sentient', 'shuttle', 'sight', 'silence', 'silicon', 'slam', 'solo', 'sonnet', 'spar',
  'speed', 'spruce', 'stellar', 'stem', 'stride', 'strive', 'structure', 'super', 'surgery', 'tactical', 'tactile', 'tango', 'team', 'tempest', 'terrestrial',
  'thoughtful', 'tiny', 'tilt', 'topaz', 'track', 'trees', 'trillion', 'trip', 'turbo', 'turn', 'twist', 'ultimate', 'umbra', 'universe', 'university',
  'vantage', 'versus', 'visionary', 'waste', 'waters', 'weave', 'weed', 'werewolf', 'winchester', 'wolverine', 'work', 'wrap', 'zebra', 'lucky', 'joy',
  'happy', 'williams', 'miller', 'murphy', 'kelly', 'morgan', 'harrison', 'crawford', 'myers', 'norris', 'richardson', 'jackson', 'patrick',
  'phillips', 'parsons', 'matthews', 'lindsay', 'irving', 'hudson', 'gibson', 'kirby', 'bentley', 'brady', 'mueller', 'moody', 'moog', 'howard',
  'bailey', 'kemper', 'fisher',
  // words of the law that the regulators' wires use every day ("Amicus Brief")
  'amicus', 'curiae', 'consent', 'verdict', 'remedy', 'petition',
]);

/**
 * How many of the largest companies (SEC's map lists the largest first) count as prominent: their
 * everyday-word names are tagged when capitalised, without further support (`prominentMention`).
 */
const PROMINENT = 100;

/**
 * Names the news uses for some of the largest companies that are not in SEC's name for them: a
 * brand ("Google" for Alphabet), or the first word of a two-word name that writers shorten and
 * that is nobody's everyday word or given name ("Exxon", "Lockheed"). Each counts as the company's
 * name (by ticker: an alias of a company the map does not list is dropped). Not the banks' short
 * names ("JPMorgan", "Goldman", "Citi"): in a headline they are most often the analyst behind a
 * call on another company ("Amazon Tightens Grip ...: JPMorgan's 'Best Idea'").
 */
const ALIASES: Readonly<Record<string, string>> = {
  google: 'GOOGL',
  facebook: 'META',
  exxon: 'XOM',
  berkshire: 'BRK-B',
  schwab: 'SCHW',
  disney: 'DIS',
  pepsi: 'PEP',
  lockheed: 'LMT',
  raytheon: 'RTX',
  tsmc: 'TSM',
};

/** Descriptors of a bank: the name left without them is most often the bank's town. */
const BANK_WORDS = new Set(['bancorp', 'bancshares', 'financial']);

/** Legal forms that, right after a name (other suffix words between: "Amazon.com Inc."), assert it is a company. */
const LEGAL_FORMS = new Set(['inc', 'incorporated', 'corp', 'corporation', 'co', 'plc', 'ltd', 'limited', 'llc', 'nv', 'ag', 'sa', 'se', 'lp']);

/** National exchanges, as SEC writes them: these listings win a name over OTC shells of the same name. */
const NATIONAL = new Set(['NYSE', 'Nasdaq', 'CBOE']);

/** Words that lead a common noun rather than a company ("hit the target", "a visa"). */
const DETERMINERS = new Set(['the', 'a', 'an', 'this', 'that', 'these', 'those', 'my', 'your', 'our', 'their', 'his', 'her', 'its', 'no', 'any', 'every', 'each']);

/** Foreign venues: a mention such as `TSX: SHOP` names a non-US line. */
// biome-ignore format: a word list reads better packed
const FOREIGN_VENUES = new Set([
  'TSX', 'TSXV', 'TSX-V', 'LSE', 'AIM', 'ASX', 'TSE', 'HKEX', 'HKSE', 'SEHK', 'CSE', 'NEO', 'FRA', 'FWB', 'XETRA', 'SIX', 'BME', 'EURONEXT', 'BIT', 'JSE',
  'NSE', 'BSE', 'SGX', 'KRX', 'TWSE', 'OMX',
]);

/** Crypto symbols written as cashtags: coins, not listings, whatever the map says. */
// biome-ignore format: a word list reads better packed
const CRYPTO = new Set([
  'BTC', 'ETH', 'SOL', 'XRP', 'DOGE', 'ADA', 'USDT', 'USDC', 'BNB', 'LTC', 'DOT', 'AVAX', 'SHIB', 'LINK', 'MATIC', 'TRX', 'XLM', 'ATOM', 'UNI', 'BCH', 'ETC',
  'XMR', 'PEPE', 'TON', 'SUI', 'APT', 'ARB', 'OP', 'NEAR', 'FIL', 'ICP', 'HBAR', 'ALGO', 'XTZ', 'EOS', 'AAVE', 'MKR', 'CRV', 'LDO', 'RNDR', 'INJ', 'TIA',
  'SEI', 'WIF', 'BONK', 'TRUMP',
]);

// US venues as writers spell them in an issuer's own mention of its listing.
const EXCHANGE_RE =
  /(?<![A-Za-z])(NASDAQ(?:\s+(?:GS|GM|CM|Global Select|Global Market|Capital Market))?|Nasdaq(?:\s+(?:GS|GM|CM|Global Select|Global Market|Capital Market))?|NYSE\s+American|NYSE\s+MKT|NYSE\s+Arca|NYSE|AMEX|Cboe|CBOE|BATS|OTCQX|OTCQB|OTC\s+Pink|OTC\s+Markets|OTC|Pink|TSX-V|TSXV|TSX|LSE|AIM|ASX|TSE|HKEX|CSE|NEO|FRA|XETRA|SIX|Euronext|JSE|NSE|BSE|SGX)\s*:\s*([A-Z][A-Z0-9]{0,5}(?:[.-][A-Z]{1,2})?)(?![A-Za-z0-9])/gi;
const CASHTAG_RE = /(?<![A-Za-z0-9$])\$([A-Z][A-Z0-9]{0,5}(?:[.-][A-Z]{1,2})?)(?![A-Za-z0-9])/g;

type Kind = 'direct' | 'prominent' | 'context' | 'never' | 'ambiguous';

interface Candidate {
  tokens: string[];
  kind: Kind;
  /** Ticker to emit; empty for `never` and `ambiguous` (they only block shorter matches). */
  ticker: string;
  cik: string;
  /** The company's whole core name, not a shortened form ("agilent technologies", not "agilent"). */
  full: boolean;
  /** For a shortened form, the word the company's name goes on with ("technologies"). */
  rest: string;
  /** SEC writes the name in mixed case ("Copa Holdings"): then "COPA" in capitals is an acronym. */
  mixedCase: boolean;
}

interface Token {
  w: string;
  start: number;
  end: number;
  /** Starts with a capital or digit. */
  cap: boolean;
  /** Has a capital or digit anywhere ("eBay"). */
  upper: boolean;
}

const WORD_RE = /[\p{L}\p{N}]+(?:[&'’][\p{L}\p{N}]+)*|&/gu;

/** Lower-case word tokens, with dotted abbreviations joined ("N.V." → "nv") and possessives dropped. */
export function tokenize(text: string): Token[] {
  const s = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/\b(?:\p{L}\.){2,}/gu, (m) => m.replace(/\./g, '') + ' '.repeat(m.length - m.replace(/\./g, '').length));
  const out: Token[] = [];
  for (const m of s.matchAll(WORD_RE)) {
    let w = m[0].toLowerCase();
    if (w === '&') w = 'and';
    else w = w.replace(/['’]s$/, '').replace(/['’]/g, '');
    const first = m[0][0] ?? '';
    out.push({ w, start: m.index ?? 0, end: (m.index ?? 0) + m[0].length, cap: first !== first.toLowerCase() || /\p{N}/u.test(first), upper: /[\p{Lu}\p{N}]/u.test(m[0]) });
  }
  return out;
}

/** The distinctive core of an SEC name, as tokens: registration tags, "The" and legal suffixes removed. */
export function coreName(name: string): string[] {
  const cleaned = name
    .replace(/\([^)]*\)/g, ' ')
    .replace(/\s*[/\\][A-Za-z]{1,4}[/\\]?\s*$/g, ' ')
    .replace(/\s*[/\\][A-Za-z]{1,4}[/\\]/g, ' ');
  const t = tokenize(cleaned).map((x) => x.w);
  while (t.length > 0 && t[0] === 'the') t.shift();
  while (t.length > 1 && LEGAL_SUFFIXES.has(t[t.length - 1]!)) t.pop();
  return t;
}

/** The ticker written as an upper-case word of its own ("Target (TGT) ..."). */
function hasBareTicker(text: string, ticker: string): boolean {
  for (let at = text.indexOf(ticker); at >= 0; at = text.indexOf(ticker, at + 1)) {
    const before = text[at - 1] ?? ' ';
    const after = text[at + ticker.length] ?? ' ';
    if (!/[A-Za-z0-9]/.test(before) && !/[A-Za-z0-9]/.test(after)) return true;
  }
  return false;
}

/** Words that may stay lower-case inside a company name ("Bank of America"). */
const LINKING = new Set(['of', 'and', 'the', 'for', 'de', 'del', 'la', 'le', 'du', 'van', 'von', 'on', 'in', 'at', 'to']);

/** A name is a proper noun: each of its words has a capital ("Nvidia", "NVIDIA", "eBay"), linking words aside. */
function properNoun(toks: Token[], i: number, len: number): boolean {
  for (let k = i; k < i + len; k++) if (!toks[k]!.upper && !LINKING.has(toks[k]!.w)) return false;
  return true;
}

/**
 * A largest company's ticker that, written in capitals, can only mean the company: four letters or
 * more and no word of the language ("NVDA", "AAPL"; not "COST"), or three that are its name or its
 * initials ("IBM", "AMD", "RTX"). Other three-letter tickers are also the acronyms of technology
 * and business news: CRM, SAN, HDB.
 */
function spelledOut(ticker: string, core: readonly string[]): boolean {
  if (!/^[A-Z]{3,}$/.test(ticker) || isEveryday(ticker.toLowerCase())) return false;
  if (ticker.length > 3) return true;
  const t = ticker.toLowerCase();
  const initials = core.filter((w) => !LINKING.has(w)).map((w) => w[0]);
  return core.join('') === t || initials.join('') === t;
}

/** An everyday English word: the hand-written COMMON list, or an ordinary word of the dictionary list. */
function isEveryday(w: string): boolean {
  return COMMON.has(w) || EVERYDAY_WORDS.has(w);
}

function isCommonish(w: string): boolean {
  return isEveryday(w) || GENERIC.has(w) || w.length <= 3;
}

function classify(tokens: string[], full: boolean): Kind {
  if (tokens.length === 1) {
    const w = tokens[0]!;
    if (w.length <= 3 || GENERIC.has(w) || /^\p{N}+$/u.test(w)) return 'never';
    // "Dana", "Megan": a person as often as the company
    if (isEveryday(w) || GIVEN_NAMES.has(w)) return 'context';
    return 'direct';
  }
  // "On Semiconductor" reads as "... Down On Semiconductor Stocks" in a title-case headline
  if (TITLE_LOWER.has(tokens[0]!)) return 'context';
  if (tokens.every(isCommonish)) {
    if (!full) return 'never';
    // two everyday words ("Artificial Intelligence", "Quantum Computing") read as a phrase unless the
    // second names a kind of business ("Arbor Realty", "General Motors"), which works like "Inc"
    if (tokens.length === 2 && !BUSINESS_NOUNS.has(tokens[1]!)) return 'context';
    return 'direct';
  }
  return 'direct';
}

/**
 * Words that name a kind of business: after a capitalised word they mark a company name the way a
 * legal suffix does. The DESCRIPTORS less places and scope words, plus real-estate and bank words.
 */
// biome-ignore format: a word list reads better packed
const BUSINESS_NOUNS = new Set([
  ...[...DESCRIPTORS].filter((w) => !['america', 'usa', 'us', 'north', 'inc', 'corp', 'global', 'worldwide', 'international', 'intl'].includes(w)),
  'realty', 'properties', 'bank', 'bankshares', 'insurance', 'reit', 'airways', 'petroleum', 'chemicals', 'foods', 'restaurants', 'hotels', 'resorts',
]);

export class Tagger {
  /** First token of a name → its candidate names, longest first. */
  private readonly byFirst = new Map<string, Candidate[]>();
  private readonly tickers = new Set<string>();
  /** CIK → first-listed ticker, for bare-ticker support of context names. */
  private readonly firstTicker = new Map<string, string>();
  /** A largest company's ticker written as a word of its own → the company's first-listed ticker. */
  private readonly spelled = new Map<string, string>();

  /**
   * `names`: also tag company names (the rules above). The service does, in headlines only
   * (`tagStory`); `bench:tagging` measures it against what each headline is about.
   */
  constructor(
    private readonly map: CompanyMap,
    private readonly opts: { names?: boolean } = {},
  ) {
    // SEC lists companies largest first: a company's place in the map is its rank by market value
    const companies = new Map<string, Listing>();
    for (const l of map.listings) {
      this.tickers.add(l.ticker);
      if (!companies.has(l.cik)) companies.set(l.cik, l);
    }
    const prominent = new Set([...companies.keys()].slice(0, PROMINENT));
    // alias → entries of (cik, full name or shortened form)
    const aliases = new Map<string, { tokens: string[]; full: Set<string>; short: Set<string>; weak: boolean; rest: string }>();
    const add = (tokens: string[], cik: string, full: boolean, weak = false, rest = '') => {
      if (tokens.length === 0) return;
      const key = tokens.join(' ');
      let a = aliases.get(key);
      if (!a) aliases.set(key, (a = { tokens, full: new Set(), short: new Set(), weak, rest }));
      (full ? a.full : a.short).add(cik);
    };
    for (const [alias, ticker] of Object.entries(ALIASES)) {
      const l = map.byTicker(ticker);
      if (l) add([alias], l.cik, true);
    }
    for (const [cik, l] of companies) {
      this.firstTicker.set(cik, l.ticker);
      const core = coreName(l.name);
      if (prominent.has(cik)) for (const c of map.byCik(cik)) if (spelledOut(c.ticker, core)) this.spelled.set(c.ticker, l.ticker);
      if (core.length === 0) continue;
      add(core, cik, true);
      // the name without trailing descriptors ("agilent technologies" → "agilent")
      let n = core.length;
      let weak = false;
      while (n > 1 && DESCRIPTORS.has(core[n - 1]!)) {
        n--;
        // a bank is named for its town: "Bridgewater" without "Bancshares" is the place
        weak ||= BANK_WORDS.has(core[n]!);
        add(core.slice(0, n), cik, false, weak, core[n]);
      }
    }
    for (const a of aliases.values()) {
      let owners = a.full.size > 0 ? a.full : a.short;
      if (owners.size > 1) {
        // one claimant on a national exchange against OTC shells: the listed one is what news means
        const listed = [...owners].filter((c) => NATIONAL.has(companies.get(c)?.exchange ?? ''));
        if (listed.length === 1) owners = new Set(listed);
      }
      let kind: Kind;
      let cik = '';
      if (owners.size !== 1) kind = 'ambiguous';
      else {
        cik = [...owners][0]!;
        kind = classify(a.tokens, a.full.size > 0);
        if (kind === 'direct' && a.weak && a.full.size === 0) kind = 'context';
        if (kind === 'context' && prominent.has(cik)) kind = 'prominent';
      }
      const ticker = kind === 'direct' || kind === 'prominent' || kind === 'context' ? this.firstTicker.get(cik)! : '';
      const name = cik ? (companies.get(cik)?.name ?? '') : '';
      const mixedCase = /\p{Ll}/u.test(name) && !name.includes(a.tokens[0]!.toUpperCase());
      const cand: Candidate = { tokens: a.tokens, kind, ticker, cik, full: a.full.size > 0, rest: a.rest, mixedCase };
      const list = this.byFirst.get(a.tokens[0]!);
      if (list) list.push(cand);
      else this.byFirst.set(a.tokens[0]!, [cand]);
    }
    for (const list of this.byFirst.values()) list.sort((x, y) => y.tokens.length - x.tokens.length);
  }

  /** Tickers the text is about, upper-case, deduplicated, in order of first mention. */
  tag(text: string): string[] {
    return firstMentions(this.mentions(text, this.opts.names ?? false));
  }

  /**
   * Tickers a story is about: company names in its headline, exchange mentions and cashtags in both.
   * A headline names what the story is about; a summary also names peers, analysts' firms, index
   * members and the places of a dateline, and every one of those a name match would tag.
   */
  tagStory(headline: string, summary: string): string[] {
    const inSummary = this.mentions(summary, false);
    for (const f of inSummary) f.at += headline.length + 1;
    return firstMentions([...this.mentions(headline, this.opts.names ?? false), ...inSummary]);
  }

  /** Every ticker mention in the text, with where it is. */
  private mentions(text: string, names: boolean): { at: number; ticker: string }[] {
    const found: { at: number; ticker: string }[] = [];
    const explicit = new Set<string>();

    EXCHANGE_RE.lastIndex = 0;
    for (const m of text.matchAll(EXCHANGE_RE)) {
      const venue = m[1]!.toUpperCase().replace(/\s+/g, ' ');
      if (FOREIGN_VENUES.has(venue.split(' ')[0]!)) continue;
      const t = this.known(m[2]!);
      if (t) {
        found.push({ at: m.index ?? 0, ticker: t });
        explicit.add(t);
      }
    }
    for (const m of text.matchAll(CASHTAG_RE)) {
      const raw = m[1]!;
      if (CRYPTO.has(raw)) continue;
      const t = this.known(raw);
      if (t) {
        found.push({ at: m.index ?? 0, ticker: t });
        explicit.add(t);
      }
    }

    const toks = names ? tokenize(text) : [];
    let prose: Prose | undefined;
    for (let i = 0; i < toks.length; ) {
      const list = this.byFirst.get(toks[i]!.w);
      let hit: Candidate | undefined;
      if (list) {
        for (const c of list) {
          if (i + c.tokens.length > toks.length) continue;
          let ok = true;
          for (let k = 1; k < c.tokens.length; k++) {
            if (toks[i + k]!.w !== c.tokens[k]) {
              ok = false;
              break;
            }
          }
          if (ok) {
            hit = c;
            break;
          }
        }
      }
      if (!hit) {
        // outside all-capitals text, where every word looks like a ticker
        const t = toks[i]!;
        const spelled = t.end - t.start >= 3 && this.spelled.get(text.slice(t.start, t.end));
        if (spelled && /\p{Ll}/u.test(text)) found.push({ at: t.start, ticker: spelled });
        i++;
        continue;
      }
      const len = hit.tokens.length;
      // "Solaris Energy" is not Solaris Resources: a shortened name followed by another descriptor
      // names another company of the same stem ("Agilent Tech" abbreviates its own)
      const after = toks[i + len];
      if (!properNoun(toks, i, len) || (!hit.full && after?.cap && DESCRIPTORS.has(after.w) && !hit.rest.startsWith(after.w))) {
        i++;
        continue;
      }
      if (hit.kind === 'direct') {
        if (!(len === 1 && ((hit.mixedCase && acronym(text, toks[i]!)) || surname(text, toks, i, () => (prose ??= proseOf(text, toks)))))) found.push({ at: toks[i]!.start, ticker: hit.ticker });
      } else if ((hit.kind === 'prominent' || hit.kind === 'context') && !readsAsWord(toks, i, len)) {
        prose ??= proseOf(text, toks);
        if ((hit.kind === 'prominent' && prominentMention(text, toks, i, len, prose)) || this.supported(text, toks, i, len, hit, prose, explicit)) {
          found.push({ at: toks[i]!.start, ticker: hit.ticker });
        }
      }
      i += len;
    }
    return found;
  }

  /** A ticker as written, if the map lists it (`BRK.B` is SEC's `BRK-B`). */
  private known(raw: string): string | undefined {
    const t = raw.toUpperCase().replace('.', '-');
    return this.tickers.has(t) ? t : undefined;
  }

  /** The strong support an everyday-word name needs (module header), for a mention that does not read as the word. */
  private supported(text: string, toks: Token[], i: number, len: number, c: Candidate, prose: Prose, explicit: Set<string>): boolean {
    const next = toks[i + len];
    const listings = this.map.byCik(c.cik);
    // An OTC company's everyday-word name counts only with its ticker or legal form: "Circle" in the
    // news is Circle Internet (NYSE), whose name is longer, not the OTC shell Circle Energy.
    const otc = !NATIONAL.has(listings[0]?.exchange ?? '');
    // a legal suffix asserts the whole name: "Strategy Inc", but not "Net Element, Inc." for Element Solutions
    if (c.full) for (let k = i + len; k < i + len + 3 && k < toks.length && LEGAL_SUFFIXES.has(toks[k]!.w); k++) if (LEGAL_FORMS.has(toks[k]!.w)) return true;
    const word = c.tokens.join('').toUpperCase();
    for (const l of listings) {
      if (explicit.has(l.ticker)) return true;
      // "CITY OF HOPE" names no listing: an upper-case name is not its own ticker
      if (l.ticker.length >= 2 && l.ticker !== word && hasBareTicker(text, l.ticker)) return true;
    }
    if (otc) return false;
    // "Apple's stock", "Target's shares": the owner of a listing
    const last = toks[i + len - 1]!;
    if (next && /['’]s$/i.test(text.slice(last.start, last.end)) && (next.w === 'stock' || next.w === 'shares' || next.w === 'share')) return true;
    // the name capitalised where only a proper noun explains it, anywhere in the text
    for (let j = 0; j + len <= toks.length; j++) {
      let same = true;
      for (let k = 0; k < len && same; k++) same = toks[j + k]!.w === c.tokens[k];
      if (same && properInProse(text, toks, j, len, prose)) return true;
    }
    return false;
  }
}

/** The tickers in order of first mention, each once. */
function firstMentions(found: { at: number; ticker: string }[]): string[] {
  found.sort((a, b) => a.at - b.at);
  const out: string[] = [];
  for (const f of found) if (!out.includes(f.ticker)) out.push(f.ticker);
  return out;
}

/** Where the text's sentences start, and which tokens sit in sentence-case prose (module header). */
interface Prose {
  /** Token starts a sentence, clause, quotation or bracket: a capital there proves nothing. */
  start: boolean[];
  /** Token is in a sentence-case sentence (lower-case words that title case would capitalise). */
  sentenceCase: boolean[];
}

/** Text between tokens that ends a sentence. */
const SENTENCE_END = /[.!?\n]|\s[-–—]\s/;
/** Text between tokens after which a capital is expected anyway (sentence, clause, quote, bracket). */
const OPENER = /[.!?:;\n"“”‘’'()[\]{}|]|\s[-–—]\s|^\s*[-–—]/;

/** Words that title case leaves lower-case (articles, conjunctions, prepositions): no sign of prose. */
// biome-ignore format: a word list reads better packed
const TITLE_LOWER = new Set([
  'a', 'an', 'the', 'and', 'or', 'nor', 'but', 'for', 'so', 'yet', 'of', 'to', 'in', 'on', 'at', 'by', 'with', 'from', 'into', 'onto', 'over', 'under', 'as',
  'vs', 'via', 'per', 'up', 'out', 'off', 'than', 'about', 'after', 'before', 'between', 'through', 'during', 'without', 'within', 'upon', 'amid', 'among',
  'against', 'across', 'toward', 'towards', 'until', 'is', 'be',
]);

/** A word that has both cases ("Gates", not "CEO" or "2025"): a capitalised word of prose. */
function titleWord(text: string, t: Token): boolean {
  return t.cap && /\p{Ll}/u.test(text.slice(t.start, t.end));
}

function proseOf(text: string, toks: Token[]): Prose {
  const start = toks.map((t, j) => j === 0 || OPENER.test(text.slice(toks[j - 1]!.end, t.start)));
  const sentenceCase = new Array<boolean>(toks.length).fill(false);
  for (let a = 0; a < toks.length; ) {
    let b = a + 1;
    while (b < toks.length && !SENTENCE_END.test(text.slice(toks[b - 1]!.end, toks[b]!.start))) b++;
    let lower = 0;
    let capital = 0;
    for (let j = a; j < b; j++) {
      const t = toks[j]!;
      if (!/\p{L}/u.test(t.w)) continue;
      if (!t.cap && !TITLE_LOWER.has(t.w)) lower++;
      else if (titleWord(text, t) && !start[j]) capital++;
    }
    // sentence case: lower-case words that title case would capitalise, at least half as many as capitals
    if (lower >= 2 && 2 * lower >= capital) for (let j = a; j < b; j++) sentenceCase[j] = true;
    a = b;
  }
  return { start, sentenceCase };
}

/**
 * A one-word name right after another capitalised word in sentence-case prose, with nothing between
 * them but a space ("Jerome Powell", "Milton Hershey"): the last word of a longer proper noun, most
 * often a person's surname. Title-case text capitalises every word, so there it proves nothing,
 * unless the word before is a given name ("Carl Icahn's Funds", "Milton Hershey School").
 */
function surname(text: string, toks: Token[], i: number, prose: () => Prose): boolean {
  const prev = toks[i - 1];
  if (!prev || !spaced(text, prev, toks[i]!) || !titleWord(text, prev)) return false;
  if (GIVEN_NAMES.has(prev.w)) return true;
  const p = prose();
  return p.sentenceCase[i]! && !p.start[i];
}

/**
 * A four-letter word in capitals in text that is not all capitals reads as an acronym ("Ballad
 * Health COPA"), not as the name of a company SEC writes in mixed case (Copa Holdings). Shorter
 * names are never tagged by name; longer ones in capitals are names ("NVIDIA").
 */
function acronym(text: string, t: Token): boolean {
  return t.end - t.start === 4 && !/\p{Ll}/u.test(text.slice(t.start, t.end)) && /\p{Ll}/u.test(text);
}

/**
 * An everyday-word name that reads as the word, whatever else the text says: not capitalised, led
 * by a determiner ("hit the target", "Hit The Target"), or part of "price target".
 */
function readsAsWord(toks: Token[], i: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (!toks[i + k]!.cap) return true;
  const prev = toks[i - 1];
  const next = toks[i + len];
  return (prev !== undefined && (DETERMINERS.has(prev.w) || prev.w === 'price')) || next?.w === 'price';
}

/** Two tokens with only white space between them: one phrase. */
function spaced(text: string, a: Token, b: Token): boolean {
  return /^\s+$/.test(text.slice(a.end, b.start));
}

/**
 * The mention at token j (len tokens) is capitalised where sentence-case prose would write a common
 * word in lower case: not at a sentence, clause, quote or bracket start, not after a determiner or a
 * number ("$67.4 Billion", "5 Genius Stocks"), and not part of a longer proper noun.
 */
function properInProse(text: string, toks: Token[], j: number, len: number, prose: Prose): boolean {
  if (prose.start[j] || !prose.sentenceCase[j]) return false;
  for (let k = 0; k < len; k++) if (!toks[j + k]!.cap) return false;
  const prev = toks[j - 1];
  if (prev && DETERMINERS.has(prev.w)) return false;
  if (prev && /^\p{N}/u.test(prev.w) && /^[\s%]+$/u.test(text.slice(prev.end, toks[j]!.start))) return false;
  // a model after it makes a product of it ("Galaxy S25", "Pixel 9")
  const next = toks[j + len];
  if (next && spaced(text, toks[j + len - 1]!, next) && /\p{N}/u.test(next.w) && next.cap) return false;
  return !partOfLongerName(text, toks, j, len);
}

/**
 * A capitalised word right before or after the mention, with only a space between, makes it part of
 * a longer proper noun ("Bill Gates", "Jerome Powell", "Gulf of Mexico" over the linking word) rather
 * than the company. Only sentence-case prose says so: title case capitalises every word.
 */
function partOfLongerName(text: string, toks: Token[], j: number, len: number): boolean {
  const prev = toks[j - 1];
  if (prev && titleWord(text, prev) && spaced(text, prev, toks[j]!)) return true;
  const next = toks[j + len];
  const after = toks[j + len + 1];
  return !!next && spaced(text, toks[j + len - 1]!, next) && (titleWord(text, next) || (next.w === 'of' && !!after && titleWord(text, after)));
}

/**
 * An everyday-word name of one of the largest companies ("Apple", "Amazon", "Visa"), capitalised: the
 * company, since news writes about the largest companies most (for a mention that does not read as
 * the word: `readsAsWord`), unless a capital proves nothing (the start of a sentence-case sentence:
 * "Apple pie recipe") or it is part of another proper noun: after a given name or a number ("H-1B
 * Visa"), or, in sentence-case prose, beside another capitalised word ("Big Apple", "Amazon Rainforest").
 */
function prominentMention(text: string, toks: Token[], j: number, len: number, prose: Prose): boolean {
  const prev = toks[j - 1];
  // "Carl Icahn", "H-1B Visa": a person's name, or a thing with a number in its name
  if (prev && spaced(text, prev, toks[j]!) && (GIVEN_NAMES.has(prev.w) || /\p{N}/u.test(prev.w))) return false;
  // in sentence case a capital at a sentence start proves nothing ("Apple pie recipe")
  return !(prose.sentenceCase[j] && (prose.start[j] || partOfLongerName(text, toks, j, len)));
}
