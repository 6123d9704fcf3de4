// SPDX-License-Identifier: Apache-2.0
package dev.relock.json;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;

/**
 * The JSON writer of relock's Java programs: the Redisson driver of the interop suite
 * (tests/interop/redisson, where this file lives) and the Redisson peer of the benchmark
 * (bench/peers/redisson). Both Maven projects compile it in: their pom.xml adds this project's
 * src/shared/java as a source root (build-helper-maven-plugin, add-source).
 *
 * <p>Writes objects (any Map, in its iteration order), arrays (Iterable, Object[], long[]),
 * strings, numbers, booleans and null; a {@link Raw} is written verbatim, anything else as the
 * string of its toString(). Non-finite numbers are null. Two layouts, each fixed by what reads
 * it:
 *
 * <pre>
 *   COMPACT  {"id":"7","ok":true,"result":0.5}   the interop protocol (tests/interop/*.cpp)
 *   BENCH    {"lib": "redisson", "ratio": 0.5}   a result line of bench/run, as relock_bench
 *                                                prints it (bench/support.cpp, result::json)
 * </pre>
 */
public final class Json {
  private Json() {}

  /** A JSON value already serialized; written verbatim. */
  public record Raw(String text) {}

  /** The separators, and how a finite Double or Float is written. */
  public enum Style {
    /** No spaces; Double.toString / Float.toString. */
    COMPACT(",", ":", Object::toString),
    /** ", " and ": "; doubles as C's printf("%.6g"), like relock_bench. */
    BENCH(", ", ": ", n -> g6(n.doubleValue()));

    private final String comma;
    private final String colon;
    private final Function<Number, String> decimal;

    Style(String comma, String colon, Function<Number, String> decimal) {
      this.comma = comma;
      this.colon = colon;
      this.decimal = decimal;
    }
  }

  /** The value in the COMPACT layout. */
  public static String write(Object value) {
    return write(value, Style.COMPACT);
  }

  public static String write(Object value, Style style) {
    StringBuilder sb = new StringBuilder(128);
    append(sb, value, style);
    return sb.toString();
  }

  /** printf("%.6g") as glibc prints it; non-finite numbers are JSON null. */
  public static String g6(double d) {
    if (!Double.isFinite(d)) {
      return "null";
    }
    if (d == 0) {
      return (1 / d < 0) ? "-0" : "0";
    }
    BigDecimal bd = new BigDecimal(d).round(new MathContext(6, RoundingMode.HALF_EVEN));
    int exp = bd.precision() - bd.scale() - 1;
    if (exp < -4 || exp >= 6) {
      BigDecimal mantissa = bd.movePointLeft(exp).stripTrailingZeros();
      String m = mantissa.scale() <= 0 ? mantissa.toBigInteger().toString()
          : mantissa.toPlainString();
      int a = Math.abs(exp);
      return m + "e" + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + a;
    }
    BigDecimal plain = bd.stripTrailingZeros();
    return plain.scale() <= 0 ? plain.toBigInteger().toString() : plain.toPlainString();
  }

  private static void append(StringBuilder sb, Object v, Style style) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Raw raw) {
      sb.append(raw.text());
    } else if (v instanceof String s) {
      string(sb, s);
    } else if (v instanceof Boolean b) {
      sb.append(b.booleanValue() ? "true" : "false");
    } else if (v instanceof Double || v instanceof Float) {
      Number n = (Number) v;
      sb.append(Double.isFinite(n.doubleValue()) ? style.decimal.apply(n) : "null");
    } else if (v instanceof Number n) {
      sb.append(n.toString());
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) {
          sb.append(style.comma);
        }
        first = false;
        string(sb, String.valueOf(e.getKey()));
        sb.append(style.colon);
        append(sb, e.getValue(), style);
      }
      sb.append('}');
    } else if (v instanceof Iterable<?> it) {
      sb.append('[');
      boolean first = true;
      for (Object o : it) {
        if (!first) {
          sb.append(style.comma);
        }
        first = false;
        append(sb, o, style);
      }
      sb.append(']');
    } else if (v instanceof Object[] arr) {
      append(sb, Arrays.asList(arr), style);
    } else if (v instanceof long[] arr) {
      append(sb, Arrays.stream(arr).boxed().toList(), style);
    } else {
      string(sb, v.toString());
    }
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
