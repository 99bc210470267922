import { describe, expect, it } from 'vitest';
import { analysedTerms, analyze } from '../../shared/search/analyze.ts';
import { buildIndexParts } from '../../shared/search/build.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { idfOf, NO_FILTER, SearchIndex, type SearchDoc } from '../../shared/search/engine.ts';
import { DEFAULT_TAGS, highlightText, snippet } from '../../shared/search/highlight.ts';
import { PreparedDelta, rank } from '../../shared/search/rank.ts';
import { applySynonyms, synonymRules, synonymText } from '../../shared/search/synonyms.ts';
import { normaliseQuery } from '../../shared/search/search-log.ts';
import { compounds, fold, segmentWords, terms, tokens, withoutRequestWords, words } from '../../shared/search/text.ts';
import { searchDoc } from '../helpers/fixtures.ts';

/*
 * Text beyond ASCII. Chinese, Japanese and Korean text (written without spaces between words;
 * Korean between phrases only) is searched by overlapping character pairs, as Lucene's CJK
 * analyzer does; Thai, Lao, Khmer and Burmese text by the words of ICU's dictionaries; the vowel
 * signs of Indic and Southeast Asian scripts are kept by folding.
 */

describe('Chinese, Japanese and Korean text analysis', () => {
  it('splits runs of these scripts into character pairs, a lone character kept, other words as they were', () => {
    expect(tokens('東京タワーの夜景')).toEqual(['東京', '京タ', 'タワ', 'ワー', 'ーの', 'の夜', '夜景']);
    expect(tokens('iPhone用ケース 北京烤鸭')).toEqual(['iphone', '用ケ', 'ケー', 'ース', '北京', '京烤', '烤鸭']);
    expect(tokens('서울에서 東 trail running')).toEqual(['서울', '울에', '에서', '東', 'trail', 'running']);
    expect(tokens('Café au lait, 3 shoes')).toEqual(words('Café au lait, 3 shoes'));
    // Characters beyond the basic plane are one character each.
    expect(tokens('𠮷野家')).toEqual(['𠮷野', '野家']);
    // Index terms (stop words out, stems) are the same pairs; the letters of runs are indexed beside them.
    expect(terms('The 東京 shoes')).toEqual(['東京', 'shoe']);
    const letters: string[] = [];
    tokens('The 東京 shoes 靴', letters);
    expect(letters).toEqual(['東', '京']);
    // Words as a query is counted in search analytics stay whole.
    expect(words('東京タワー 夜景')).toEqual(['東京タワー', '夜景']);
  });

  it('folds widths and accents but keeps kana voicing and Hangul syllables', () => {
    expect(fold('ガス')).not.toBe(fold('カス'));
    expect(fold('ｶﾞｽ')).toBe('ガス');
    expect(fold('서울')).toBe('서울');
    expect(fold('Café ÉTÉ')).toBe('cafe ete');
    expect(fold('ＡＢＣ１２３')).toBe('abc123');
    // A voicing mark that joins no letter is taken off, not left to split the word.
    expect(tokens('か\u309aき')).toEqual(['かき']);
    expect(tokens('e\u3099x')).toEqual(['ex']);
  });
});

const emb = new HashingEmbedding(256);
const doc = (id: number, name: string, description: string): SearchDoc => searchDoc((t) => emb.embedOne(t), id, name, description);
const DOCS = [
  doc(1, 'スマートフォンケース', 'iPhone用の耐衝撃ケース'),
  doc(2, '東京タワーの夜景ポスター', '東京の夜景を写した大判ポスター'),
  doc(3, '京都の寺院カレンダー', '京都の有名な寺院の写真'),
  doc(4, '北京烤鸭礼盒', '正宗北京烤鸭'),
  doc(5, '서울 여행 가이드북', '서울에서 가볼 만한 곳'),
  doc(6, 'Running shoes', 'Light trail running shoes'),
];

function ranked(built: boolean, query: string, mode: 'keyword' | 'hybrid', docs = DOCS) {
  const index = SearchIndex.build(built ? docs : [], 256, 1);
  const delta = new PreparedDelta(built ? { docs: [], masked: new Set() } : { docs, masked: new Set() });
  delta.bind(index);
  const stats = delta.stats();
  const queryVector = mode === 'keyword' ? null : emb.embedOne(query, (t) => idfOf(stats.n, stats.df(t)));
  const r = rank(index, delta, { query, mode, filter: NO_FILTER, queryVector, profile: null }, { limit: 10 });
  return { ids: r.hits.map((h) => h.doc.id), scores: r.hits.map((h) => h.score), total: r.total };
}

describe('Chinese, Japanese and Korean search', () => {
  it('finds a word inside a run written without spaces, alike in the delta and in a build', () => {
    const cases: [string, number][] = [
      ['ケース', 1],
      ['夜景', 2],
      ['寺院', 3],
      ['烤鸭', 4],
      ['서울', 5],
      ['東京 ポスター', 2],
    ];
    for (const [query, id] of cases) {
      for (const mode of ['keyword', 'hybrid'] as const) {
        const fresh = ranked(false, query, mode);
        expect(fresh.ids[0], `${query} ${mode}`).toBe(id);
        expect(ranked(true, query, mode), `${query} ${mode}`).toEqual(fresh);
      }
    }
    // Kyoto (京都) is not Tokyo (東京), though both hold 京.
    expect(ranked(true, '東京', 'keyword').ids).toEqual([2]);
    // One character finds the letter wherever it is, not only the pairs it starts.
    const shoes = [doc(11, 'ランニング靴', '軽量'), doc(12, '靴下 3足組', ''), doc(13, '革の鞄', ''), doc(14, 'ランニングウェア', '')];
    for (const built of [false, true]) {
      expect(ranked(built, '靴', 'keyword', shoes).ids.sort()).toEqual([11, 12]);
      expect(ranked(built, '鞄', 'keyword', shoes).ids).toEqual([13]);
      // More characters search the pairs only: "ニン" is in both running items, "靴" alone no longer counts.
      expect(ranked(built, 'ランニング靴', 'keyword', shoes).ids[0]).toBe(11);
    }
    expect(ranked(false, '靴', 'hybrid', shoes)).toEqual(ranked(true, '靴', 'hybrid', shoes));
    expect(ranked(true, '東', 'keyword').ids).toEqual([2]);
    // Pairs have no typos: two characters beyond the basic plane are four code units, one unit
    // apart from many others.
    const astral = [doc(7, '𩸽𩹉定食', '')];
    const index = SearchIndex.build(astral, 256, 1);
    const none = new PreparedDelta({ docs: [], masked: new Set() });
    none.bind(index);
    expect(rank(index, none, { query: '𩸽𩹊', mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 10 }).total).toBe(0);
    expect(rank(index, none, { query: '𩸽𩹉', mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 10 }).total).toBe(1);
  });

  it('marks the matched letters of a run as one, HTML-escaped, and snippets a long run by letters', () => {
    const index = SearchIndex.build(DOCS, 256, 1);
    const matched = (q: string) => new Set(index.expand(q).keys());
    expect(highlightText('スマートフォンケース <b>', matched('ケース'), DEFAULT_TAGS)).toBe('スマートフォン<em>ケース</em> &lt;b&gt;');
    expect(highlightText('iPhone用の耐衝撃ケース', matched('iphone ケース'), DEFAULT_TAGS)).toBe('<em>iPhone</em>用の耐衝撃<em>ケース</em>');
    expect(highlightText('北京烤鸭 & 서울에서', matched('烤鸭 서울'), { pre: '[', post: ']' })).toBe('北京[烤鸭] &amp; [서울]에서');
    // Text that folds into other letters than it shows: half-width kana with their voicing
    // marks, decomposed Hangul, a squared word.
    expect(highlightText('ﾊﾞｯｸﾞ 革製', matched('バッグ'), DEFAULT_TAGS)).toBe('<em>ﾊﾞｯｸﾞ</em> 革製');
    expect(highlightText('ｶﾞｽｺﾝﾛ用', matched('ガス'), DEFAULT_TAGS)).toBe('<em>ｶﾞｽ</em>ｺﾝﾛ用');
    expect(highlightText('\u1109\u1165\u110b\u116e\u11af 여행', matched('서울'), DEFAULT_TAGS)).toBe('<em>\u1109\u1165\u110b\u116e\u11af</em> 여행');
    expect(highlightText('㍿ 東京', matched('株式'), DEFAULT_TAGS)).toBe('<em>㍿</em> 東京');
    // One character marks the letter wherever it is, and the pairs it starts as a prefix (as `jack` marks "jacket").
    expect(highlightText('東京タワーと夜の東', matched('東'), DEFAULT_TAGS)).toBe('<em>東京</em>タワーと夜の<em>東</em>');
    const long = `${'あ'.repeat(40)}夜景${'い'.repeat(40)}`;
    expect(snippet(long, matched('夜景'), DEFAULT_TAGS, 6)).toBe('…ああ<em>夜景</em>いい…');
  });

  it('applies synonyms written in these scripts', async () => {
    const rules = await synonymRules('t-cjk', async () => [{ id: 1, type: 'two_way', input: null, synonyms: ['携帯', 'スマートフォン'], created: 1, updated_at: 1 }]);
    const known = (t: string) => ['スマ', 'マー', 'ート', 'トフ', 'フォ', 'ォン', 'ケー', 'ース'].includes(t);
    // A word of several pairs is brought as a phrase: its pairs must all be there.
    expect(applySynonyms('携帯ケース', rules, known)).toEqual({ query: '携帯ケース', phrases: ['スマートフォン'], alternatives: [] });
    // A phrase whose pairs are not all in the vocabulary is not added.
    expect(applySynonyms('スマートフォン', rules, known)).toEqual({ query: 'スマートフォン', phrases: [], alternatives: [] });
  });
});

describe('scripts whose vowels are marks', () => {
  it('keeps Indic and Thai vowel signs, and still takes accents and Arabic and Hebrew points off', () => {
    expect(words('किताब पढ़ना')).toEqual(['किताब', fold('पढ़ना')]);
    expect(fold('काम')).not.toBe(fold('कम'));
    expect(words('สวัสดีครับ')).toEqual(['สวัสดี', 'ครับ']);
    expect(words('Café naïve مَرْحَبًا שָׁלוֹם')).toEqual(['cafe', 'naive', 'مرحبا', 'שלום']);
    // Precomposed and decomposed forms fold alike.
    expect(fold('\u095d')).toBe(fold('\u0922\u093c'));
  });

  it('finds and marks a Hindi word, and not the word its consonants spell without its vowels', () => {
    const hindi = [doc(21, 'काम की किताब', 'घर का काम'), doc(22, 'कम दाम', '')];
    expect(ranked(true, 'काम', 'keyword', hindi).ids).toEqual([21]);
    expect(ranked(false, 'कम', 'keyword', hindi)).toEqual(ranked(true, 'कम', 'keyword', hindi));
    expect(ranked(true, 'कम', 'keyword', hindi).ids).toEqual([22]);
    const index = SearchIndex.build(hindi, 256, 1);
    expect(highlightText('काम की किताब', new Set(index.expand('किताब ').keys()), DEFAULT_TAGS)).toBe('काम की <em>किताब</em>');
  });
});

describe('Thai, Lao, Khmer and Burmese text', () => {
  it('splits runs of these scripts into their words, before folding, and apart from the letters of other scripts', () => {
    expect(words('ภาษาไทยง่ายนิดเดียว')).toEqual(['ภาษา', 'ไทย', 'ง่าย', 'นิด', 'เดียว']);
    expect(words('ຂ້ອຍຮັກພາສາລາວ')).toEqual(['ຂ້ອຍ', 'ຮັກ', 'ພາສາ', 'ລາວ']);
    expect(words('မြန်မာဘာသာစကား')).toEqual(['မြန်မာဘာသာ', 'စကား']);
    expect(words('ខ្ញុំស្រលាញ់ភាសាខ្មែរ')).toEqual(['ខ្ញុំ', 'ស្រលាញ់', 'ភាសាខ្មែរ']);
    expect(words('iPhoneราคาถูก 3ชิ้น')).toEqual(['iphone', 'ราคา', 'ถูก', '3', 'ชิ้น']);
    // Folding takes "ำ" apart (NFKD) into letters the dictionary does not hold: "ทำงาน" (to work) is
    // one word, however its "am" is written, folded or not.
    expect(words('ทำงานที่บ้าน')).toEqual([fold('ทำงาน'), 'ที่', 'บ้าน']);
    expect(words('ท\u0e4d\u0e32งานที่บ้าน')).toEqual(words('ทำงานที่บ้าน'));
    expect(words(fold('ทำงานที่บ้าน'))).toEqual(words('ทำงานที่บ้าน'));
    expect(terms('ทำงาน')).toEqual([fold('ทำงาน')]);
    // A query counted in search analytics reads the same words when it is sent again.
    for (const q of ['ทำงานที่บ้าน', 'ທຳງານ', 'ภาษาไทย iPhone']) expect(normaliseQuery(normaliseQuery(q)), q).toBe(normaliseQuery(q));
    // Digits, the repetition and abbreviation marks and another script end a word.
    expect(words('ราคา๑๐๐บาท')).toEqual(['ราคา', '100', 'บาท']);
    expect(words('เด็กๆเล่นกัน กรุงเทพฯ ຊ້າໆ')).toEqual(['เด็ก', 'เล่น', 'กัน', 'กรุงเทพ', 'ຊ້າ']);
    expect(words('ทำงานខ្មែរ')).toEqual([fold('ทำงาน'), 'ខ្មែរ']);
    // Invisible characters inside a run take no part in its words, as elsewhere (a soft hyphen, a
    // joiner); a zero-width space between words leaves them as they were.
    expect(words('ภา\u00adษา မြန်\u200dမာ')).toEqual(words('ภาษา မြန်မာ'));
    expect(words('ខ្ញុំ\u200bស្រលាញ់\u200bភាសាខ្មែរ')).toEqual(words('ខ្ញុំស្រលាញ់ភាសាខ្មែរ'));
    expect(highlightText('เรียนภา\u00adษาไทย', new Set(words('ภาษา')), DEFAULT_TAGS)).toBe('เรียน<em>ภา\u00adษา</em>ไทย');
    // Lao's ໜ and ໝ likewise, which folding writes as ຫນ and ຫມ ("ໝາ", dog, was ຫ|ມາ).
    expect(words('ຫມາໃຫຍ່')).toEqual(words('ໝາໃຫຍ່'));
    expect(words(fold('ທິດເໜືອ'))).toEqual(words('ທິດເໜືອ'));
    expect(words('ໝາໃຫຍ່')).toEqual([fold('ໝາ'), 'ໃຫຍ່']);
    // A run longer than the dictionary is given at once reads as its words, as it would whole.
    const long = words('ภาษาไทย'.repeat(300));
    expect(long).toHaveLength(600);
    expect(long.every((w, i) => w === (i % 2 ? 'ไทย' : 'ภาษา'))).toBe(true);
    const paragraph = (
      'ประเทศไทยมีประวัติศาสตร์ยาวนานและวัฒนธรรมที่หลากหลายการศึกษาเป็นสิ่งสำคัญสำหรับการพัฒนาประเทศเด็กควรได้รับการศึกษาที่ดีเพื่ออนาคตที่สดใส' +
      'เศรษฐกิจของประเทศขึ้นอยู่กับการเกษตรและการท่องเที่ยวนักท่องเที่ยวจากทั่วโลกมาเยือนประเทศไทยทุกปีเพื่อชมความงามของธรรมชาติและวัดวาอาราม'
    ).repeat(6);
    const icu = new Intl.Segmenter('en', { granularity: 'word' });
    for (let at = 0; at < 60; at += 3) {
      const run = paragraph.slice(at, at + 1200);
      expect(words(run), `from ${at}`).toEqual(Array.from(icu.segment(run)).flatMap((x) => segmentWords(x.segment)));
    }
  });

  it('finds a word inside a run, alike in the delta and in a build, and marks that word alone', () => {
    const thai = [doc(31, 'หนังสือภาษาไทย', 'เรียนภาษาไทยง่ายนิดเดียว'), doc(32, 'รองเท้าวิ่ง', 'น้ำหนักเบา'), doc(33, 'ປຶ້ມພາສາລາວ', '')];
    for (const mode of ['keyword', 'hybrid'] as const) {
      expect(ranked(true, 'ไทย', mode, thai).ids[0], mode).toBe(31);
      expect(ranked(false, 'ไทย', mode, thai), mode).toEqual(ranked(true, 'ไทย', mode, thai));
      expect(ranked(true, 'รองเท้า', mode, thai).ids[0], mode).toBe(32);
      expect(ranked(true, 'ລາວ', mode, thai).ids[0], mode).toBe(33);
    }
    expect(ranked(true, 'ไทย', 'keyword', thai).ids).toEqual([31]);
    const index = SearchIndex.build(thai, 256, 1);
    const matched = (q: string) => new Set(index.expand(q).keys());
    expect(highlightText('เรียนภาษาไทยง่าย & <b>', matched('ไทย '), DEFAULT_TAGS)).toBe('เรียนภาษา<em>ไทย</em>ง่าย &amp; &lt;b&gt;');
    expect(highlightText('iPhoneราคาถูก', matched('iphone ถูก'), DEFAULT_TAGS)).toBe('<em>iPhone</em>ราคา<em>ถูก</em>');
    // Beside Chinese, Japanese or Korean letters in one run; "am" written in two characters.
    expect(highlightText('東京ภาษาไทย', matched('ไทย '), DEFAULT_TAGS)).toBe('東京ภาษา<em>ไทย</em>');
    expect(ranked(true, 'ไทย', 'keyword', [doc(71, '東京ภาษาไทย', '')]).ids).toEqual([71]);
    expect(highlightText('abcๆdef กรุงเทพฯ123', new Set(['def', '123']), DEFAULT_TAGS)).toBe('abcๆ<em>def</em> กรุงเทพฯ<em>123</em>');
    const dogs = [doc(43, 'ໝາໃຫຍ່', ''), doc(44, 'ຫມາໃຫຍ່', '')];
    for (const q of ['ໝາ ', 'ຫມາ ']) expect(ranked(true, q, 'keyword', dogs).ids.sort(), q).toEqual([43, 44]);
    const work = [doc(41, 'ทำงานที่บ้าน', ''), doc(42, 'ท\u0e4d\u0e32งานที่บ้าน', '')];
    expect(ranked(true, 'ทำงาน ', 'keyword', work).ids.sort()).toEqual([41, 42]);
    expect(highlightText('ท\u0e4d\u0e32งานที่บ้าน', new Set(SearchIndex.build(work, 256, 1).expand('ทำงาน ').keys()), DEFAULT_TAGS)).toBe('<em>ท\u0e4d\u0e32งาน</em>ที่บ้าน');
    // A snippet counts the words the dictionary finds.
    const long = `${'ภาษาไทย'.repeat(20)}รองเท้า${'ภาษาไทย'.repeat(20)}`;
    expect(snippet(long, matched('รองเท้า '), DEFAULT_TAGS, 5)).toBe('…ภาษาไทย<em>รองเท้า</em>ภาษาไทย…');
  });

  it('applies synonyms written in these scripts, whose words folding changes', async () => {
    const rules = await synonymRules('t-thai', async () => [{ id: 1, type: 'two_way', input: null, synonyms: ['remote', 'ทำงานที่บ้าน'], created: 1, updated_at: 1 }]);
    const known = (t: string) => ['remot', fold('ทำงาน'), 'ที่', 'บ้าน'].includes(t);
    expect(words(synonymText(applySynonyms('remote', rules, known)))).toEqual(words('ทำงานที่บ้าน remote'));
  });

  it('finds a word as it is typed, though the dictionary splits the half typed into other words', () => {
    const items = [doc(51, 'รองเท้าวิ่งน้ำหนักเบา', ''), doc(52, 'หนังสือเรียนภาษาไทย', ''), doc(53, 'မြန်မာဘာသာစကား', '')];
    // "รองเท" (half of รองเท้า, shoes) is รอง|เท to the dictionary; "หนังส" (half of หนังสือ, book) หนัง|ส.
    for (const typed of ['รองเท', 'รองเท้', 'รองเท้า']) expect(ranked(true, typed, 'keyword', items).ids[0], typed).toBe(51);
    for (const typed of ['หนังส', 'หนังสื', 'หนังสือ']) expect(ranked(true, typed, 'keyword', items).ids[0], typed).toBe(52);
    expect(ranked(true, 'မြန်မာဘ', 'keyword', items).ids[0]).toBe(53);
    for (const typed of ['รองเท', 'หนังส']) expect(ranked(false, typed, 'hybrid', items), typed).toEqual(ranked(true, typed, 'hybrid', items));
    // A whole word the half typed starts with still counts: หนัง (leather) finds the bag too.
    const bag = [...items, doc(54, 'กระเป๋าหนัง', '')];
    expect(ranked(true, 'หนังส', 'keyword', bag).ids.sort()).toEqual([52, 54]);
    // Once the word is ended (a space), only whole words match: หนัง is the bag's alone.
    expect(ranked(true, 'หนัง ', 'keyword', bag).ids).toEqual([54]);
  });
});

describe('folding beyond accents', () => {
  it('folds letters as Lucene ASCII, Arabic, Persian and Hindi folding does, drops invisible characters, and ends words at symbols', () => {
    const cases: [string, string[]][] = [
      // Symbols NFKD would spell as letters end the word instead.
      ['Nike™ Air 40℃ №5', ['nike', 'air', '40', '5']],
      // Invisible characters inside a word: the soft hyphen, zero-width space and joiners, the BOM.
      ['Wash\u00ADable wi\u200Bfi \ufeffbom', ['washable', 'wifi', 'bom']],
      ['क्\u200Dष', words('क्ष')],
      ['می\u200Cخواهم', words('میخواهم')],
      // Letters with no accent to take off; Turkish dotless i; ß as ss; Greek final sigma.
      ['Łódź Ærø Œuvre Þórður Đà Søren', ['lodz', 'aero', 'oeuvre', 'thordur', 'da', 'soren']],
      ['KIZ kız ılık', ['kiz', 'kiz', 'ilik']],
      ['Straße GRÖSSE größe', ['strasse', 'grosse', 'grosse']],
      ['ΟΔΟΣ οδος', words('οδοσ οδοσ')],
      // Arabic tatweel; Persian keheh and yeh, alef maksura, teh marbuta; the Devanagari nukta.
      ['كتـــاب کتاب', [fold('كتاب'), fold('كتاب')]],
      ['ی ى ة', [fold('ي'), fold('ي'), fold('ه')]],
      ['फ़ोन', words('फोन')],
      // Other scripts' decimal digits are ASCII digits.
      ['١٥ ۱۵ १५ ๑๕ 𝟙𝟝', ['15', '15', '15', '15', '15']],
      // Symbols that stand for letters still fold into them: squared CJK words, Kangxi radicals
      // (text copied from PDFs), circled and parenthesised letters.
      ['㍿', ['株式', '式会', '会社']],
      ['\u2f47本', ['日本']],
      ['Ⓐ🄰 ⒜', ['aa', 'a']],
      // Nukta letters NFC puts back together; Persian heh with yeh above.
      ['ऩ ऱ', words('न र')],
      ['خانۀ', words('خانه')],
    ];
    for (const [text, expected] of cases) expect(tokens(text), text).toEqual(expected);
    // Folded text folds to itself.
    for (const [text] of cases) expect(fold(fold(text)), text).toBe(fold(text));
  });

  it('finds each spelling by the other, alike in the delta and in a build, and marks the word as written', () => {
    const items = [
      doc(81, 'Nike™ Air running shoe', ''),
      doc(82, 'Washable wool sweater', 'Machine wash\u00ADable'),
      doc(83, 'KIZ ELBİSE', ''),
      doc(84, 'Straße map', ''),
      doc(85, 'Łódź guide', ''),
      doc(86, 'كتـــاب', ''),
      doc(87, 'iPhone ۱۵', ''),
      doc(88, 'ΚΑΣΕΤΑ', ''),
    ];
    const cases: [string, number][] = [
      ['nike ', 81],
      ['wash\u00ADable ', 82],
      ['kız ', 83],
      ['strasse ', 84],
      ['STRASSE ', 84],
      ['lodz ', 85],
      ['كتاب ', 86],
      ['15 ', 87],
      ['κασ', 88],
    ];
    for (const [query, id] of cases) {
      expect(ranked(true, query, 'keyword', items).ids, query).toEqual([id]);
      expect(ranked(false, query, 'keyword', items), query).toEqual(ranked(true, query, 'keyword', items));
    }
    const index = SearchIndex.build(items, 256, 1);
    const matched = (q: string) => new Set(index.expand(q).keys());
    expect(highlightText('Nike™ Air', matched('nike '), DEFAULT_TAGS)).toBe('<em>Nike</em>™ Air');
    expect(highlightText('Machine wash\u00ADable', matched('washable '), DEFAULT_TAGS)).toBe('Machine <em>wash\u00ADable</em>');
    expect(highlightText('Straße map', matched('strasse '), DEFAULT_TAGS)).toBe('<em>Straße</em> map');
    expect(highlightText('iPhone ۱۵', matched('15 '), DEFAULT_TAGS)).toBe('iPhone <em>۱۵</em>');
  });
});

describe('English possessives', () => {
  it("takes the 's off, so a query ending in one is not a half-typed s", () => {
    expect(words("Men's shoes, WOMEN’S boots, O'Brien's")).toEqual(['men', 'shoes', 'women', 'boots', 'o', 'brien']);
    // After a mark, a symbol or an invisible character; the full-width apostrophe.
    expect(words("Jose\u0301's Nike™'s Men\uff07s")).toEqual(['jose', 'nike', 'men']);
    // A long query's request words go without leaving their 's behind.
    expect(words(withoutRequestWords("the paper's findings about wing flutter in supersonic flow", 8))).toEqual(words('the findings about wing flutter in supersonic flow'));
    const items = [doc(91, "Women's running shoe", ''), doc(92, 'Summer sandal', 'Something sporty'), doc(93, "Men's trail shoe", '')];
    for (const built of [true, false]) {
      // Was: "s", half typed, stood for every word starting with s (sandal, summer, something, sporty, shoe).
      expect(ranked(built, "women's", 'keyword', items).ids, `built: ${built}`).toEqual([91]);
      expect(ranked(built, 'women’s shoe', 'keyword', items).ids[0], `built: ${built}`).toBe(91);
    }
    const index = SearchIndex.build(items, 256, 1);
    expect(highlightText("Men's trail shoe", new Set(index.expand("men's").keys()), DEFAULT_TAGS)).toBe('<em>Men</em>&#39;s trail shoe');
    // The possessive's "s" is not the word s.
    expect(highlightText("Men's shirt size S", new Set(['size', 's']), DEFAULT_TAGS)).toBe('Men&#39;s shirt <em>size</em> <em>S</em>');
  });
});

describe('a word written without the hyphen the catalog has', () => {
  it('finds both halves, unless the word has a typo correction, a half shorter than two letters, or digits', () => {
    const items = [doc(95, 'Wi Fi router', ''), doc(96, 'Ice cone maker', ''), doc(97, 'Vitamin C tablets', ''), doc(98, 'Super sonic jet', '')];
    for (const built of [true, false]) {
      expect(ranked(built, 'wifi ', 'keyword', items).ids, `built: ${built}`).toEqual([95]);
      expect(ranked(built, 'supersonic ', 'keyword', items).ids, `built: ${built}`).toEqual([98]);
    }
    // A word with a typo correction is that word mistyped, not two words: "cones" (cone) is code,
    // not co|nes.
    const typo = [doc(101, 'Code book', ''), doc(102, 'Co nes tapas', '')];
    expect(ranked(true, 'cones ', 'keyword', typo).ids).toEqual([101]);
    // A half of one letter is not taken (c|jet).
    expect(ranked(true, 'cones ', 'keyword', items).ids).toEqual([96]);
    expect(ranked(true, 'cjet ', 'keyword', items).ids).toEqual([]);
    const index = SearchIndex.build(items, 256, 1);
    expect(highlightText('Wi Fi router', new Set(index.expand('wifi ').keys()), DEFAULT_TAGS)).toBe('<em>Wi</em> <em>Fi</em> router');
  });
});

describe('words joined by a hyphen, an apostrophe or an ampersand', () => {
  const items = [
    doc(111, 'Wi-Fi router', 'Dual-band, for e-mail and video'),
    doc(112, 'Organic cotton T-shirt', ''),
    doc(113, "L'Oréal shampoo", 'By H&M? No: by L’Oréal Paris'),
    doc(114, '3-4 person tent', 'Sleeps 3-4, packs to 2024-01 size'),
    doc(115, 'Router stand', 'Holds any router'),
  ];

  it('are also indexed as one word, so the word typed whole finds them, alike in the delta and in a build', () => {
    expect(Array.from(compounds("Wi-Fi, e\u2011mail, rock'n'roll, men's, L’Oréal, H&M, 3-4, 2024-01-15, 東京-タワー"), (c) => c.word)).toEqual(['wifi', 'email', 'rocknroll', 'loreal', 'hm']);
    const cases: [string, number][] = [
      ['wifi', 111],
      ['email', 111],
      ['dualband', 111],
      ['tshirt', 112],
      ['loreal', 113],
      ['hm', 113],
      // Half typed.
      ['tshi', 112],
    ];
    for (const [query, id] of cases) {
      for (const built of [true, false]) {
        const r = ranked(built, query, 'keyword', items);
        expect(r.ids, `${query}, built: ${built}`).toEqual([id]);
        expect(r.scores.every(Number.isFinite)).toBe(true);
        expect(ranked(built, query, 'hybrid', items).ids[0], `${query} hybrid, built: ${built}`).toBe(id);
      }
      expect(ranked(true, query, 'hybrid', items), query).toEqual(ranked(false, query, 'hybrid', items));
    }
    // Its words are found as before; numbers joined by a hyphen are a range or a date, not a word.
    expect(ranked(true, 'wi fi', 'keyword', items).ids).toEqual([111]);
    expect(ranked(true, '34', 'keyword', items).ids).toEqual([]);
  });

  it("take no part in a field's length nor in term feedback, and are marked as one", () => {
    // The joined word is its words' letters again: a field is as long as without it.
    const joined = analyze(doc(120, 'Wi-Fi router', ''));
    const spaced = analyze(doc(121, 'Wi Fi router', ''));
    expect(joined.len).toEqual(spaced.len);
    expect(joined.tf.get('wifi')).toEqual([1, 0, 0]);
    expect(spaced.tf.has('wifi')).toBe(false);
    // Term feedback weighs a document's words; that the name holds the joined word still counts (a query naming it).
    const kept = analysedTerms(doc(122, 'Wi-Fi router', 'for e-mail'));
    expect(kept.terms).not.toContain('wifi');
    expect(kept.terms).not.toContain('email');
    expect([...kept.nameJoined]).toEqual(['wifi']);
    const index = SearchIndex.build(items, 256, 1);
    const marks = (query: string, text: string) => highlightText(text, new Set(index.expand(query).keys()), DEFAULT_TAGS);
    expect(marks('wifi email', 'Wi-Fi router, for e-mail')).toBe('<em>Wi-Fi</em> router, for <em>e-mail</em>');
    expect(marks('loreal', "L'Oréal shampoo")).toBe('<em>L&#39;Oréal</em> shampoo');
    // A word of it alone marks that word (typed whole: half typed, wi is also a prefix of wifi).
    expect(marks('wi ', 'Wi-Fi router')).toBe('<em>Wi</em>-Fi router');
    expect(marks('wi', 'Wi-Fi router')).toBe('<em>Wi-Fi</em> router');
    expect(snippet(`${'word '.repeat(30)}T-shirt and ${'more '.repeat(30)}`, new Set(index.expand('tshirt').keys()), DEFAULT_TAGS)).toContain('<em>T-shirt</em>');
  });

  it('are joined of 8 words and 64 letters at most, and found in one pass over a long text', () => {
    expect(Array.from(compounds('a-b-c-d-e-f-g-h'), (c) => c.word)).toEqual(['abcdefgh']);
    expect([...compounds('a-b-c-d-e-f-g-h-i')]).toEqual([]);
    expect([...compounds(`${'x'.repeat(40)}-${'y'.repeat(30)}`)]).toEqual([]);
    // A long run ending in a lone hyphen: a search started again at each of its letters went back
    // through the rest of it (quadratic: 0.6 s for 20,000 letters, 2.3 s for 40,000; here 40 s in
    // all, past the test's time, against milliseconds).
    const long = `${'a'.repeat(39_999)}-`;
    for (let i = 0; i < 16; i++) expect([...compounds(long)]).toEqual([]);
  });

  it('leave a build made before them counting as it did when its items change', () => {
    // A build whose analysis did not join words: its postings are those of "Wi Fi router", its
    // stored item reads "Wi-Fi router" (the term wifi now). Deleting the item takes from each
    // term's count only what the build counted: wifi is not taken below none (an IDF of NaN).
    const parts = buildIndexParts([doc(131, 'Wi Fi router', ''), doc(132, 'Wifi extender', '')], 256, 1);
    const old = new SearchIndex({ ...parts, docs: [doc(131, 'Wi-Fi router', ''), parts.docs[1] as SearchDoc] });
    expect(old.indexedUnder('wifi', 1)).toBe(true);
    expect(old.indexedUnder('wifi', 0)).toBe(false);
    expect(old.indexedUnder('router', 0)).toBe(true);
    const delta = new PreparedDelta({ docs: [], masked: new Set([131]) }, old);
    expect(delta.stats().df('wifi')).toBe(1);
    expect(delta.stats().df('router')).toBe(0);
    const r = rank(old, delta, { query: 'wifi', mode: 'keyword', filter: NO_FILTER, queryVector: null, profile: null }, { limit: 10 });
    expect(r.hits.map((h) => [h.doc.id, Number.isFinite(h.score)])).toEqual([[132, true]]);
  });
});
