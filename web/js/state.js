// The page state shared by the modules (one object, mutated in place).

export const state = {
  tickers: [],
  selected: [],
  charts: [], // the synchronised uPlot instances on screen (main first)
  hidden: new Set(), // ids of series hidden through the legend
  // { mode, ids, dates, values (paths) | summary, runCount, runs (sims: runs only once fetched), weights, tickers,
  //   seed, model, request, simsBody }
  last: null,
  pending: null, // a request restored from the URL, run once the key and tickers are there
  focused: null,
  portfolios: [], // the own-portfolios editor: [{ name, weights: [[TICKER, "typed weight"], …] }]
  optionDefaults: {}, // /v1/info options.defaults
  blockLengthModel: undefined, // /v1/info options.block_length.model: the model that reads block_length
  captureBases: [], // /v1/info options.capture_basis: /report's bases of the capture ratios, the default first
  controller: null, // the AbortController of the run in flight
  axisLabels: {}, // chart element id → the y axis labels drawn last
};
