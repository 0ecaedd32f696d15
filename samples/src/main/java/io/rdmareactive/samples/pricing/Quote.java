package io.rdmareactive.samples.pricing;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;

/**
 * One price, as the pricing pair exchanges it: the text {@code SYMBOL PRICE SEQUENCE}, one per
 * message. A subscription is the text {@code SUBSCRIBE SYM1,SYM2,...}.
 */
public record Quote(String symbol, BigDecimal price, long sequence) {
  public static final String SUBSCRIBE = "SUBSCRIBE ";

  public String encode() {
    return symbol + " " + price.toPlainString() + " " + sequence;
  }

  /** Parses {@link #encode()}'s form; IllegalArgumentException naming the text otherwise. */
  public static Quote parse(String text) {
    String[] f = text.split(" ");
    if (f.length != 3) {
      throw new IllegalArgumentException("not a quote: '" + text + "'");
    }
    return new Quote(f[0], new BigDecimal(f[1]), Long.parseLong(f[2]));
  }

  public static String subscribe(List<String> symbols) {
    return SUBSCRIBE + String.join(",", symbols);
  }

  /** The symbols of a subscription; IllegalArgumentException when {@code text} is none. */
  public static List<String> symbols(String text) {
    if (!text.startsWith(SUBSCRIBE)) {
      throw new IllegalArgumentException("not a subscription: '" + text + "'");
    }
    List<String> s = Arrays.stream(text.substring(SUBSCRIBE.length()).split(",")).map(String::trim)
        .filter(x -> !x.isEmpty()).toList();
    if (s.isEmpty()) {
      throw new IllegalArgumentException("a subscription needs at least one symbol: '" + text + "'");
    }
    return s;
  }
}
