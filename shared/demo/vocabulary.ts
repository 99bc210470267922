/**
 * The demo shop's vocabulary: an outdoor-and-home store in twelve categories, each with its own
 * brands (a few brands sell in two), product kinds with what is notable about each, model names
 * and uses, from which catalog.ts composes names and descriptions. Brands are invented.
 */
export interface ProductSpec {
  name: string;
  /** Price range in whole euros. */
  price: readonly [number, number];
  /** Phrases that complete "... with": what this kind of product is known for. */
  features: readonly string[];
}

export interface CategorySpec {
  /** `metadata.category` of its items. */
  category: string;
  brands: readonly string[];
  products: readonly ProductSpec[];
  /** Model names: "Fleetfoot *Tempo* Road Running Shoe". */
  variants: readonly string[];
  /** Completes "Made for ...". */
  uses: readonly string[];
  /** How many shoppers prefer it, relative to the others. */
  appeal: number;
  /** Categories whose fans often like this one too. */
  related: readonly string[];
}

const p = (name: string, price: readonly [number, number], ...features: string[]): ProductSpec => ({ name, price, features });

export const CATEGORIES: readonly CategorySpec[] = [
  {
    category: 'running',
    brands: ['Fleetfoot', 'Stridewell', 'Aerolope', 'Kestrel'],
    products: [
      p('Trail Running Shoe', [90, 180], 'a grippy lugged outsole', 'a rock plate', 'a breathable mesh upper', 'a secure heel lock'),
      p('Road Running Shoe', [80, 170], 'a cushioned foam midsole', 'a breathable mesh upper', 'a smooth heel-to-toe roll', 'reflective details'),
      p('Racing Flat', [120, 250], 'a featherweight build', 'a carbon plate', 'a snappy, responsive midsole'),
      p('Running Vest', [60, 140], 'two soft flasks', 'a bounce-free fit', 'a whistle and stretch pockets'),
      p('Running Tights', [40, 90], 'a zipped phone pocket', 'flat seams that do not chafe', 'reflective details'),
      p('Running Jacket', [70, 160], 'a packable hood', 'a windproof front', 'reflective details for early runs'),
      p('GPS Running Watch', [150, 450], 'heart-rate tracking', 'two weeks of battery', 'route navigation'),
      p('Compression Socks', [15, 35], 'graduated compression', 'a cushioned heel', 'merino blend yarn'),
    ],
    variants: ['Swift', 'Tempo', 'Ultra', 'Glide', 'Sprint', 'Pace', 'Ridge', 'Zephyr'],
    uses: ['long road miles', 'muddy forest trails', 'race day', 'easy recovery runs', 'interval sessions'],
    appeal: 1.4,
    related: ['fitness', 'cycling', 'hiking'],
  },
  {
    category: 'hiking',
    brands: ['Fjellrev', 'Summitcraft', 'Alpenglow', 'Kestrel'],
    products: [
      p('Hiking Boot', [110, 260], 'a waterproof membrane', 'a stiff, grippy sole', 'ankle support for rocky ground'),
      p('Trekking Poles', [40, 150], 'flick-lock adjustment', 'cork grips', 'carbon shafts'),
      p('Daypack', [50, 140], 'a padded hip belt', 'a ventilated back panel', 'a rain cover'),
      p('Rain Jacket', [90, 320], 'a waterproof membrane', 'taped seams', 'pit zips for ventilation'),
      p('Softshell Jacket', [80, 200], 'a stretchy, windproof fabric', 'a helmet-compatible hood', 'chest pockets'),
      p('Hiking Trousers', [50, 120], 'zip-off legs', 'a quick-drying fabric', 'articulated knees'),
      p('Merino Base Layer', [45, 100], 'odour-resistant merino wool', 'flat seams', 'a thumb-loop cuff'),
      p('Wool Hiking Socks', [15, 30], 'cushioned merino wool', 'a seamless toe', 'arch support'),
    ],
    variants: ['Ridge', 'Scree', 'Tundra', 'Pathfinder', 'Crest', 'Moraine', 'Cairn', 'Fell'],
    uses: ['alpine day hikes', 'wet weekends in the hills', 'long-distance trails', 'scrambling', 'winter walks'],
    appeal: 1.2,
    related: ['camping', 'running'],
  },
  {
    category: 'camping',
    brands: ['Embercamp', 'Fjellrev', 'Nightjar', 'Basecamp'],
    products: [
      p('Two-Person Tent', [150, 450], 'a quick pitch in minutes', 'two doors and porches', 'a three-season rating'),
      p('Ultralight Tent', [250, 600], 'a packed weight under a kilo', 'trekking-pole pitching', 'a silnylon fly'),
      p('Sleeping Bag', [80, 400], 'a comfort rating of -5 °C', 'water-resistant down', 'a compression stuff sack'),
      p('Sleeping Mat', [50, 180], 'an insulated core', 'a one-breath inflation valve', 'a quiet fabric'),
      p('Camp Stove', [35, 120], 'a windproof burner', 'piezo ignition', 'a boil time of three minutes'),
      p('Cook Set', [30, 90], 'nesting titanium pots', 'folding handles', 'a strainer lid'),
      p('Camping Lantern', [20, 60], 'a USB-rechargeable battery', 'warm dimmable light', 'a hanging hook'),
      p('Water Filter', [25, 70], 'a 0.1-micron hollow fibre', 'a squeeze pouch', 'no chemicals'),
    ],
    variants: ['Nomad', 'Bivouac', 'Firefly', 'Pinecone', 'Aurora', 'Driftwood', 'Hollow', 'Starlight'],
    uses: ['wild camping', 'festival weekends', 'bikepacking trips', 'family campsites', 'cold mountain nights'],
    appeal: 1.0,
    related: ['hiking', 'cycling'],
  },
  {
    category: 'cycling',
    brands: ['Velocette', 'Spokesmith', 'Chainline', 'Aerolope'],
    products: [
      p('Cycling Helmet', [50, 220], 'rotational impact protection', 'aerodynamic vents', 'a magnetic buckle'),
      p('Bike Light Set', [30, 120], 'a 1000-lumen front beam', 'a USB-C charge', 'a quick-release mount'),
      p('Cycling Jersey', [45, 130], 'three rear pockets', 'a full-length zip', 'a wicking fabric'),
      p('Bib Shorts', [60, 180], 'a chamois pad for long days', 'mesh straps', 'silicone leg grippers'),
      p('Saddle Bag', [20, 60], 'a waterproof roll-top', 'room for a spare tube', 'a quick-release mount'),
      p('Mini Pump', [15, 50], 'a pressure gauge', 'Presta and Schrader heads', 'a frame clip'),
      p('Bike Lock', [30, 110], 'a hardened steel shackle', 'an anti-pick cylinder', 'a frame bracket'),
      p('Handlebar Bag', [30, 90], 'a map window', 'a waterproof roll-top', 'a quick-release mount'),
    ],
    variants: ['Cadence', 'Echelon', 'Sprint', 'Gravel', 'Audax', 'Peloton', 'Granfondo', 'Velo'],
    uses: ['the daily commute', 'gravel adventures', 'sportives', 'winter training rides', 'city cycling'],
    appeal: 1.1,
    related: ['running', 'camping'],
  },
  {
    category: 'fitness',
    brands: ['Ironleaf', 'Corewise', 'Pulsefit', 'Stridewell'],
    products: [
      p('Adjustable Dumbbells', [120, 400], 'quick weight changes', 'a knurled grip', 'a compact stand'),
      p('Kettlebell', [25, 90], 'a powder-coated handle', 'a flat base', 'a single cast-iron piece'),
      p('Resistance Bands', [15, 40], 'five resistance levels', 'padded handles', 'a door anchor'),
      p('Pull-Up Bar', [25, 70], 'foam grips', 'a no-screw doorframe fit', 'three grip positions'),
      p('Jump Rope', [10, 35], 'steel ball bearings', 'an adjustable cable', 'weighted handles'),
      p('Foam Roller', [15, 45], 'a textured surface', 'a hollow, rigid core', 'three densities'),
      p('Training Shoe', [70, 150], 'a flat, stable heel', 'a wide toe box', 'a durable rubber wrap'),
      p('Gym Bag', [30, 80], 'a ventilated shoe compartment', 'a wet pocket', 'padded straps'),
    ],
    variants: ['Forge', 'Core', 'Titan', 'Flex', 'Power', 'Atlas', 'Grit', 'Bolt'],
    uses: ['home workouts', 'strength training', 'HIIT circuits', 'warm-ups and mobility', 'small apartments'],
    appeal: 1.0,
    related: ['running', 'yoga'],
  },
  {
    category: 'yoga',
    brands: ['Lotusline', 'Mossgarden', 'Corewise', 'Stillwater'],
    products: [
      p('Yoga Mat', [30, 110], 'natural tree rubber', 'a grippy surface even when damp', 'alignment lines'),
      p('Cork Yoga Block', [10, 25], 'sustainable cork', 'rounded edges', 'a firm, light core'),
      p('Yoga Strap', [8, 20], 'a metal D-ring buckle', 'organic cotton', 'loops for stretching'),
      p('Meditation Cushion', [30, 70], 'buckwheat filling', 'a washable cover', 'a carry handle'),
      p('Yoga Wheel', [25, 50], 'a padded surface', 'a load rating of 250 kg', 'a back-opening shape'),
      p('Yoga Leggings', [40, 95], 'a high, soft waistband', 'a squat-proof fabric', 'a hidden pocket'),
      p('Bolster', [35, 80], 'a firm cotton filling', 'a washable cover', 'extra support for restorative poses'),
      p('Mat Towel', [20, 45], 'silicone grip dots', 'quick-drying microfibre', 'a full-mat length'),
    ],
    variants: ['Lotus', 'Serene', 'Flow', 'Balance', 'Sage', 'Zen', 'Harmony', 'Breathe'],
    uses: ['hot yoga', 'morning stretches', 'meditation practice', 'pilates classes', 'travel'],
    appeal: 0.8,
    related: ['fitness', 'books'],
  },
  {
    category: 'coffee',
    brands: ['Roastwright', 'Bean & Barrow', 'Crema Nova', 'Stillwater'],
    products: [
      p('Espresso Blend', [9, 22], 'notes of chocolate and hazelnut', 'a thick crema', 'beans roasted in small batches'),
      p('Single-Origin Coffee Beans', [11, 28], 'notes of cherry and jasmine', 'a light roast', 'beans roasted in small batches'),
      p('Burr Coffee Grinder', [80, 350], 'conical steel burrs', '40 grind settings', 'a quiet motor'),
      p('Pour-Over Coffee Dripper', [15, 40], 'a spiral-ribbed ceramic cone', 'a single large hole for even flow', 'paper filters included'),
      p('Gooseneck Kettle', [45, 160], 'a precise temperature dial', 'a slim pouring spout', 'a hold-warm mode'),
      p('French Press', [20, 60], 'borosilicate glass', 'a double steel mesh filter', 'a heat-proof handle'),
      p('Moka Pot', [20, 55], 'cast aluminium', 'a safety valve', 'a classic eight-sided shape'),
      p('Travel Mug', [15, 40], 'double-wall insulation', 'a leak-proof lid', 'room for a large flat white'),
    ],
    variants: ['Barista', 'Morning', 'Nocturne', 'Classic', 'Reserve', 'Daybreak', 'Origin', 'Crema'],
    // Each names coffee, as a coffee shop's copy does: an item that only its category calls coffee
    // ranked under books that mention the word (the search "coffee" found twelve books first).
    uses: ['slow weekend coffee', 'espresso and coffee at home', 'coffee at the office', 'coffee on camping mornings', 'cold brew coffee'],
    appeal: 1.3,
    related: ['kitchen', 'books'],
  },
  {
    category: 'kitchen',
    brands: ['Copperpot', 'Hearthware', 'Knifecraft', 'Crema Nova'],
    products: [
      p("Chef's Knife", [50, 220], 'forged carbon steel', 'a razor-sharp edge', 'a balanced weight'),
      p('Cast Iron Skillet', [30, 90], 'even heat retention', 'a pre-seasoned surface', 'an oven-safe handle'),
      p('Dutch Oven', [70, 300], 'enamelled cast iron', 'a tight-fitting lid', 'even heat retention'),
      p('Cutting Board', [30, 120], 'end-grain walnut', 'a juice groove', 'non-slip feet'),
      p('Stand Mixer', [200, 600], 'a 5-litre steel bowl', 'ten speeds', 'a dough hook and whisk'),
      p('Non-Stick Pan', [25, 90], 'a ceramic non-stick coating', 'an induction-ready base', 'a stay-cool handle'),
      p('Knife Sharpener', [15, 60], 'two grit stages', 'a fixed angle guide', 'a non-slip base'),
      p('Digital Thermometer', [15, 40], 'a two-second reading', 'a folding probe', 'a backlit display'),
    ],
    variants: ['Artisan', 'Classic', 'Heritage', 'Pro', 'Rustic', 'Signature', 'Everyday', 'Bistro'],
    uses: ['weeknight dinners', 'bread baking', 'slow braises', 'meal prep', 'entertaining friends'],
    appeal: 1.1,
    related: ['coffee', 'garden'],
  },
  {
    category: 'lighting',
    brands: ['Lumo', 'Glowhaus', 'Nightjar', 'Lanternworks'],
    products: [
      p('Desk Lamp', [35, 150], 'a flexible gooseneck', 'dimmable warm light', 'a USB charging port'),
      p('Floor Lamp', [80, 300], 'a linen shade', 'a brushed brass finish', 'a foot switch'),
      p('Reading Lamp', [40, 140], 'an adjustable arm', 'a focused, glare-free beam', 'dimmable warm light'),
      p('Pendant Light', [60, 250], 'a hand-blown glass shade', 'an adjustable cord', 'a brushed brass finish'),
      p('Smart Bulb Set', [30, 90], 'app and voice control', 'sixteen million colours', 'energy-efficient LEDs'),
      p('Bedside Lamp', [30, 100], 'a touch switch', 'a sunrise alarm', 'dimmable warm light'),
      p('String Lights', [15, 45], 'weatherproof bulbs', 'a solar panel', 'eight light modes'),
      p('Table Lamp', [40, 160], 'a ceramic base', 'a linen shade', 'a dimmer on the cord'),
    ],
    variants: ['Halo', 'Arc', 'Beacon', 'Ember', 'Lumen', 'Nova', 'Orbit', 'Dusk'],
    uses: ['late-night reading', 'home offices', 'cosy living rooms', 'bedrooms', 'garden parties'],
    appeal: 0.9,
    related: ['audio', 'books', 'garden'],
  },
  {
    category: 'audio',
    brands: ['Sonique', 'Bassline', 'Echofield', 'Pulsefit'],
    products: [
      p('Wireless Headphones', [60, 200], '30 hours of battery', 'multipoint Bluetooth', 'soft memory-foam cushions'),
      p('Noise-Cancelling Headphones', [150, 400], 'active noise cancellation', 'a transparency mode', '30 hours of battery'),
      p('Bluetooth Speaker', [40, 180], 'a warm, balanced sound', 'twelve hours of battery', 'a stereo pairing mode'),
      p('Sport Earbuds', [40, 150], 'secure ear hooks', 'IPX7 water resistance', 'a pocketable charging case'),
      p('Turntable', [150, 500], 'a built-in phono preamp', 'a belt drive', 'a carbon-fibre tonearm'),
      p('Soundbar', [150, 600], 'a wireless subwoofer', 'a dialogue mode for films', 'HDMI ARC'),
      p('Portable Radio', [35, 110], 'DAB+ and FM', 'a wind-up crank', 'a built-in torch'),
      p('Waterproof Speaker', [40, 130], 'IPX7 water resistance', 'deep bass', 'a floating design'),
    ],
    variants: ['Aria', 'Pulse', 'Resonance', 'Studio', 'Wave', 'Tempo', 'Echo', 'Vinyl'],
    uses: ['long flights', 'workouts', 'the beach', 'record collections', 'movie nights'],
    appeal: 1.2,
    related: ['lighting', 'fitness'],
  },
  {
    category: 'books',
    brands: ['Pinecone Press', 'Atlas & Ink', 'Northwind Books', 'Hearthware'],
    products: [
      p('Trail Guide', [15, 30], 'fold-out maps', 'a hundred routes graded by difficulty', 'a waterproof cover'),
      p('Cookbook', [20, 40], 'recipes tested by the authors', 'a lay-flat binding', 'hundreds of colour photographs'),
      p('Field Guide to Birds', [15, 35], 'hand-painted plates', 'range maps', 'a pocket format'),
      p('Coffee Atlas', [25, 45], 'profiles of every growing region', 'brewing guides', 'hundreds of colour photographs'),
      p('Running Memoir', [12, 25], 'a foreword by a marathon champion', 'training diaries', 'a new afterword'),
      p('Yoga Handbook', [15, 30], 'step-by-step pose photographs', 'sequences for every level', 'a lay-flat binding'),
      p('Star Atlas', [20, 40], 'seasonal sky charts', 'a red-light friendly print', 'a spiral binding'),
      p('Garden Almanac', [15, 30], 'a month-by-month planting calendar', 'companion-planting charts', 'illustrations of every herb'),
    ],
    variants: ['Illustrated', 'Pocket', 'Complete', 'Essential', 'Revised', 'Collected', 'Hardback', 'Deluxe'],
    uses: ['planning your next trip', 'cosy evenings', 'gifting', 'beginners', 'long train journeys'],
    appeal: 0.8,
    related: ['coffee', 'yoga', 'garden'],
  },
  {
    category: 'garden',
    brands: ['Greenthumb', 'Rootstock', 'Hearthware', 'Bloomfield'],
    products: [
      p('Pruning Shears', [20, 70], 'rust-proof stainless steel blades', 'an ergonomic grip', 'a safety lock'),
      p('Garden Hose', [30, 90], 'a kink-free design', 'a seven-pattern spray nozzle', 'brass fittings'),
      p('Raised Bed Kit', [80, 250], 'FSC-certified cedar', 'tool-free assembly', 'a weed-blocking liner'),
      p('Watering Can', [15, 50], 'a long, balanced spout', 'a removable rose', 'UV-stable plastic'),
      p('Seed Starter Tray', [12, 35], 'self-watering reservoirs', 'a humidity dome', 'reusable cells'),
      p('Compost Bin', [60, 180], 'a twin-chamber tumbler', 'air vents', 'a rodent-proof lid'),
      p('Herb Planter', [20, 60], 'self-watering reservoirs', 'a drainage tray', 'room for six herbs'),
      p('Bird Feeder', [15, 50], 'a squirrel-proof cage', 'a seed-saving tray', 'a hanging chain'),
    ],
    variants: ['Meadow', 'Orchard', 'Willow', 'Fern', 'Bramble', 'Heather', 'Thistle', 'Clover'],
    uses: ['balcony gardens', 'vegetable patches', 'pruning roses', 'growing herbs indoors', 'attracting wildlife'],
    appeal: 0.9,
    related: ['kitchen', 'lighting', 'books'],
  },
];
