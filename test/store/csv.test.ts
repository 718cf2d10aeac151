import { describe, expect, it } from "vitest";
import { CsvSyntaxError, parseCsv, readCsvRecords, type CsvProjection } from "../../src/store/csv.js";

describe("CSV reader", () => {
  it("splits plain records and reports each record's line, skipping blank lines, CRLF and a BOM", () => {
    const recs = readCsvRecords("\ufeffDate,A,B\r\n2020-01-01,1,2\r\n\r\n2020-01-02,,3\n");
    expect(recs).toEqual([
      { fields: ["Date", "A", "B"], line: 1 },
      { fields: ["2020-01-01", "1", "2"], line: 2 },
      { fields: ["2020-01-02", "", "3"], line: 4 },
    ]);
  });

  it("reads quoted fields with commas, doubled quotes and line breaks, and keeps line numbers right after them", () => {
    const recs = readCsvRecords('ticker,date,close\n"A,B","2020-01-01","1.5"\n"say ""hi""\nthere",x,\nlast,1,2');
    expect(recs).toEqual([
      { fields: ["ticker", "date", "close"], line: 1 },
      { fields: ["A,B", "2020-01-01", "1.5"], line: 2 },
      { fields: ['say "hi"\nthere', "x", ""], line: 3 },
      { fields: ["last", "1", "2"], line: 5 },
    ]);
  });

  it("keeps a trailing empty field and reads a final record without a newline", () => {
    expect(readCsvRecords("a,b,\nc")).toEqual([{ fields: ["a", "b", ""], line: 1 }, { fields: ["c"], line: 2 }]);
  });

  it("fails on an unterminated quote, naming the line where it starts", () => {
    expect(() => readCsvRecords('a,b\n1,"open\n2,3\n')).toThrowError(CsvSyntaxError);
    try {
      readCsvRecords('a,b\n1,"open\n2,3\n');
    } catch (e) {
      expect((e as CsvSyntaxError).line).toBe(2);
    }
  });

  it("with a column projection set after the header materialises only the wanted columns, keeping the field count", () => {
    const got: string[][] = [];
    const projection: CsvProjection = {};
    parseCsv("a,b,c,d\n1,2,3,4\n5,,7,8\n\"q,x\",9,10,11\n", (fields) => {
      got.push(fields);
      if (!projection.mask) projection.mask = [false, true, false, true];
    }, projection);
    expect(got).toEqual([["a", "b", "c", "d"], ["", "2", "", "4"], ["", "", "", "8"], ["q,x", "9", "10", "11"]]);
  });
});
