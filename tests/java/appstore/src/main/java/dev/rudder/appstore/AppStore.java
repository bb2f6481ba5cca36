package dev.rudder.appstore;

import com.google.gson.Gson;
import com.google.gson.ToNumberPolicy;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.util.Config;
import io.kubernetes.client.util.PatchUtils;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An app store's steps on Captain's API (app.alauda.io: ChartRepo, Chart, HelmRequest), one step per
 * command, through the official Kubernetes Java client's generic CustomObjectsApi (CoreV1Api for the
 * Secret and ConfigMaps), as an app store written against Captain drives them. The cluster is the
 * one of the kubeconfig in $KUBECONFIG.
 *
 * <p>Run as {@code AppStore COMMAND ARGS...}, or {@code AppStore serve}: one JVM that reads one
 * command a line from stdin (arguments separated by tabs) and answers each on stdout with its
 * output, then its error lines each after an STX character, then a line {@code <EOT>rc=N} (the EOT
 * character, then the exit code), so that a test pays the JVM's start once and can tell the
 * command's errors from the others'. Objects are printed as JSON on one line; errors go to stderr and give rc 1 (2 for a
 * usage error).
 */
public final class AppStore {
  static final String GROUP = "app.alauda.io";
  static final String ROLLBACK_ANNOTATION = "app.alauda.io/rollback-to";
  static final char EOT = '\u0004';
  static final char STX = '\u0002';

  static final String USAGE = String.join("\n",
      "usage: AppStore COMMAND ARGS...   (or: AppStore serve, one tab-separated command a line on stdin)",
      "  KIND is helmrequest, chartrepo or chart, optionally /VERSION (default v1, v1beta1, v1alpha1)",
      "  chartrepo-create NS NAME URL USERNAME PASSWORD CA_FILE   Secret NAME-auth + ChartRepo NAME",
      "  configmap-apply NS NAME KEY FILE                         create or replace a ConfigMap holding FILE under KEY",
      "  secret-apply NS NAME KEY FILE                            the same for a Secret",
      "  wait KIND NS NAME PHASE SECONDS                          status.phase, at the current generation",
      "  wait-gone KIND NS NAME SECONDS                           until the object is not found",
      "  charts NS REPO                                           the Chart objects of REPO (names, versions) as JSON",
      "  helmrequest-create VERSION NS NAME CHART CHART_VERSION VALUES_JSON [configmap:NAME[:KEY]|secret:NAME[:KEY]...]",
      "  helmrequest-patch VERSION NS NAME MERGE_PATCH_JSON        a JSON merge patch",
      "  helmrequest-replace VERSION NS NAME SPEC_JSON             get, set spec fields (null removes), replace",
      "  rollback VERSION NS NAME REVISION [ANNOTATION]           set (or with '' clear) the rollback annotation",
      "  delete KIND NS NAME [POLICY]                             propagationPolicy (default Foreground)",
      "  get KIND NS NAME                                         the object as JSON");

  /** A usage error: the message names what is wrong. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String msg) {
      super(msg);
    }
  }

  /** A resource of Captain's API at one version. */
  record Kind(String version, String plural) {
    static Kind parse(String arg) throws UsageException {
      String[] p = arg.split("/", 2);
      String plural;
      String def;
      switch (p[0]) {
        case "helmrequest":
          plural = "helmrequests";
          def = "v1";
          break;
        case "chartrepo":
          plural = "chartrepos";
          def = "v1beta1";
          break;
        case "chart":
          plural = "charts";
          def = "v1alpha1";
          break;
        default:
          throw new UsageException("KIND: \"" + p[0] + "\" is not one of helmrequest, chartrepo, chart");
      }
      return new Kind(p.length > 1 ? p[1] : def, plural);
    }
  }

  private final CustomObjectsApi custom;
  private final CoreV1Api core;
  private final ApiClient client;
  private final Gson gson;
  private final Gson patchGson; // keeps nulls: in a merge patch a null removes the field

  AppStore(ApiClient client) {
    this.client = client;
    this.custom = new CustomObjectsApi(client);
    this.core = new CoreV1Api(client);
    this.gson = JSON.getGson();
    this.patchGson = gson.newBuilder().serializeNulls().create();
  }

  /** Entry point: one command from the arguments, or many from stdin with "serve". */
  public static void main(String[] args) throws IOException {
    // Whole numbers stay integers (generation 2, not 2.0) in what is read and printed.
    // (newBuilder keeps the client's adapters: dates, quantities, patches.)
    JSON.setGson(JSON.getGson().newBuilder().setObjectToNumberStrategy(ToNumberPolicy.LONG_OR_DOUBLE).disableHtmlEscaping().create());
    String kc = System.getenv("KUBECONFIG");
    if (kc == null || kc.isEmpty()) {
      System.err.println("appstore: KUBECONFIG is not set");
      System.exit(1);
    }
    ApiClient client = Config.fromConfig(kc);
    client.setReadTimeout(60_000);
    AppStore s = new AppStore(client);
    if (args.length == 1 && args[0].equals("serve")) {
      s.serve();
      return;
    }
    System.exit(s.run(args, System.out, System.err));
  }

  /** Reads tab-separated commands from stdin until its end, answering each with its output and rc. */
  void serve() throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      ByteArrayOutputStream buf = new ByteArrayOutputStream(), ebuf = new ByteArrayOutputStream();
      int rc;
      try (PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
          PrintStream err = new PrintStream(ebuf, true, StandardCharsets.UTF_8)) {
        rc = run(line.split("\t", -1), out, err);
      }
      System.out.print(buf.toString(StandardCharsets.UTF_8));
      for (String e : ebuf.toString(StandardCharsets.UTF_8).split("\n")) {
        if (!e.isEmpty()) System.out.println(STX + e);
      }
      System.out.println(EOT + "rc=" + rc);
      System.out.flush();
      System.err.flush();
    }
  }

  /** Runs one command; 0 on success, 1 on failure, 2 on a usage error (each told on err). */
  int run(String[] a, PrintStream out, PrintStream err) {
    if (a.length == 0) {
      err.println(USAGE);
      return 2;
    }
    String cmd = a[0];
    List<String> r = Arrays.asList(a).subList(1, a.length);
    try {
      switch (cmd) {
        case "chartrepo-create" -> chartRepoCreate(args(cmd, r, 6, 6), out);
        case "configmap-apply" -> dataApply(false, args(cmd, r, 4, 4), out);
        case "secret-apply" -> dataApply(true, args(cmd, r, 4, 4), out);
        case "wait" -> {
          return waitPhase(args(cmd, r, 5, 5), out, err);
        }
        case "wait-gone" -> {
          return waitGone(args(cmd, r, 4, 4), out, err);
        }
        case "charts" -> charts(args(cmd, r, 2, 2), out);
        case "helmrequest-create" -> helmRequestCreate(args(cmd, r, 6, Integer.MAX_VALUE), out);
        case "helmrequest-patch" -> helmRequestPatch(args(cmd, r, 4, 4), out);
        case "helmrequest-replace" -> helmRequestReplace(args(cmd, r, 4, 4), out);
        case "rollback" -> rollback(args(cmd, r, 4, 5), out);
        case "delete" -> delete(args(cmd, r, 3, 4), out);
        case "get" -> get(args(cmd, r, 3, 3), out);
        case "help", "--help", "-h" -> out.println(USAGE);
        default -> throw new UsageException("unknown command \"" + cmd + "\"");
      }
      return 0;
    } catch (UsageException e) {
      err.println("appstore: " + e.getMessage());
      err.println(USAGE);
      return 2;
    } catch (ApiException e) {
      err.println("appstore: " + cmd + ": HTTP " + e.getCode() + ": " + oneLine(e.getResponseBody() != null ? e.getResponseBody() : e.getMessage()));
      return 1;
    } catch (IOException | RuntimeException e) {
      err.println("appstore: " + cmd + ": " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("appstore: " + cmd + ": interrupted");
      return 1;
    }
  }

  private static List<String> args(String cmd, List<String> r, int min, int max) throws UsageException {
    if (r.size() < min || r.size() > max)
      throw new UsageException(cmd + ": wants " + (min == max ? String.valueOf(min) : max == Integer.MAX_VALUE ? min + " or more" : min + " to " + max)
          + " arguments, got " + r.size());
    return r;
  }

  private static String oneLine(String s) {
    return s.replace('\n', ' ').trim();
  }

  /** JSON text into a map, or a usage error naming the argument. */
  private Map<String, Object> jsonObject(String what, String text) throws UsageException {
    Object o;
    try {
      o = gson.fromJson(text, Object.class);
    } catch (RuntimeException e) {
      throw new UsageException(what + ": not JSON: " + e.getMessage());
    }
    if (!(o instanceof Map<?, ?> m)) throw new UsageException(what + ": must be a JSON object, got " + text);
    Map<String, Object> out = new LinkedHashMap<>();
    m.forEach((k, v) -> out.put(String.valueOf(k), v));
    return out;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> child(Map<String, Object> m, String key) {
    Object v = m.get(key);
    if (v instanceof Map<?, ?>) return (Map<String, Object>) v;
    Map<String, Object> n = new LinkedHashMap<>();
    m.put(key, n);
    return n;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> asMap(Object o) {
    return o instanceof Map<?, ?> ? (Map<String, Object>) o : new LinkedHashMap<>();
  }

  private static Map<String, Object> object(String apiVersion, String kind, String ns, String name) {
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("apiVersion", apiVersion);
    o.put("kind", kind);
    Map<String, Object> meta = child(o, "metadata");
    meta.put("name", name);
    meta.put("namespace", ns);
    return o;
  }

  /** Secret NAME-auth (username, password, ca.crt) and ChartRepo NAME of type Chart that names it. */
  private void chartRepoCreate(List<String> a, PrintStream out) throws ApiException, IOException {
    String ns = a.get(0), name = a.get(1), url = a.get(2);
    byte[] ca = Files.readAllBytes(Path.of(a.get(5)));
    String secret = name + "-auth";
    Map<String, byte[]> data = new LinkedHashMap<>();
    data.put("username", a.get(3).getBytes(StandardCharsets.UTF_8));
    data.put("password", a.get(4).getBytes(StandardCharsets.UTF_8));
    data.put("ca.crt", ca);
    V1Secret s = new V1Secret().metadata(new V1ObjectMeta().name(secret).namespace(ns)).type("Opaque").data(data);
    core.createNamespacedSecret(ns, s).execute();
    Map<String, Object> repo = object(GROUP + "/v1beta1", "ChartRepo", ns, name);
    Map<String, Object> spec = child(repo, "spec");
    spec.put("type", "Chart");
    spec.put("url", url);
    Map<String, Object> ref = child(spec, "secret");
    ref.put("name", secret);
    ref.put("namespace", ns);
    out.println(gson.toJson(custom.createNamespacedCustomObject(GROUP, "v1beta1", ns, "chartrepos", repo).execute()));
  }

  /** A call of the API (for replaceOrCreate). */
  private interface Call<T> {
    T run() throws ApiException;
  }

  /** replace, or create when there is nothing to replace (404). */
  private static <T> T replaceOrCreate(Call<T> replace, Call<T> create) throws ApiException {
    try {
      return replace.run();
    } catch (ApiException e) {
      if (e.getCode() != 404) throw e;
      return create.run();
    }
  }

  /**
   * A ConfigMap (or a Secret) holding FILE's text under KEY, as valuesFrom reads it: replaced (an
   * update without resourceVersion, which these kinds accept) or created; prints name and resourceVersion.
   */
  private void dataApply(boolean secret, List<String> a, PrintStream out) throws ApiException, IOException {
    String ns = a.get(0), name = a.get(1);
    Map<String, String> text = new LinkedHashMap<>();
    text.put(a.get(2), Files.readString(Path.of(a.get(3))));
    V1ObjectMeta meta = new V1ObjectMeta().name(name).namespace(ns), got;
    if (secret) {
      V1Secret o = new V1Secret().metadata(meta).type("Opaque").stringData(text);
      got = replaceOrCreate(() -> core.replaceNamespacedSecret(name, ns, o).execute().getMetadata(),
          () -> core.createNamespacedSecret(ns, o).execute().getMetadata());
    } else {
      V1ConfigMap o = new V1ConfigMap().metadata(meta).data(text);
      got = replaceOrCreate(() -> core.replaceNamespacedConfigMap(name, ns, o).execute().getMetadata(),
          () -> core.createNamespacedConfigMap(ns, o).execute().getMetadata());
    }
    out.println(got.getName() + " " + got.getResourceVersion());
  }

  private Map<String, Object> fetch(Kind k, String ns, String name) throws ApiException {
    return asMap(custom.getNamespacedCustomObject(GROUP, k.version(), ns, k.plural(), name).execute());
  }

  /** Polls until status.phase is PHASE and status.observedGeneration (when the kind has one) is metadata.generation. */
  private int waitPhase(List<String> a, PrintStream out, PrintStream err) throws UsageException, ApiException, InterruptedException {
    Kind k = Kind.parse(a.get(0));
    String ns = a.get(1), name = a.get(2), phase = a.get(3);
    long end = System.nanoTime() + seconds(a.get(4)) * 1_000_000_000L;
    Map<String, Object> o = null;
    while (true) {
      try {
        o = fetch(k, ns, name);
        Map<String, Object> st = asMap(o.get("status"));
        Object gen = asMap(o.get("metadata")).get("generation"), obs = st.get("observedGeneration");
        boolean current = obs == null || String.valueOf(obs).equals(String.valueOf(gen));
        if (phase.equals(st.get("phase")) && current) {
          out.println(gson.toJson(o));
          return 0;
        }
      } catch (ApiException e) {
        if (e.getCode() != 404) throw e;
      }
      if (System.nanoTime() > end) break;
      Thread.sleep(200);
    }
    err.println("appstore: wait: " + a.get(0) + " " + ns + "/" + name + " did not reach phase " + phase + " in " + a.get(4) + "s; last seen: "
        + (o == null ? "not found" : gson.toJson(o.get("status"))));
    return 1;
  }

  private int waitGone(List<String> a, PrintStream out, PrintStream err) throws UsageException, ApiException, InterruptedException {
    Kind k = Kind.parse(a.get(0));
    String ns = a.get(1), name = a.get(2);
    long end = System.nanoTime() + seconds(a.get(3)) * 1_000_000_000L;
    Map<String, Object> o;
    while (true) {
      try {
        o = fetch(k, ns, name);
      } catch (ApiException e) {
        if (e.getCode() != 404) throw e;
        out.println("gone");
        return 0;
      }
      if (System.nanoTime() > end) break;
      Thread.sleep(200);
    }
    err.println("appstore: wait-gone: " + a.get(0) + " " + ns + "/" + name + " still there after " + a.get(3) + "s: "
        + gson.toJson(asMap(o.get("metadata")).get("finalizers")) + " " + gson.toJson(o.get("status")));
    return 1;
  }

  private static long seconds(String s) throws UsageException {
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new UsageException("SECONDS: \"" + s + "\" is not a whole number");
    }
  }

  /** The Chart objects labelled repo=REPO: [{name, chart, versions: [{version, appVersion, description}]}] as listed. */
  private void charts(List<String> a, PrintStream out) throws ApiException {
    Map<String, Object> list = asMap(custom.listNamespacedCustomObject(GROUP, "v1alpha1", a.get(0), "charts").labelSelector("repo=" + a.get(1)).execute());
    List<Object> res = new ArrayList<>();
    Object items = list.get("items");
    if (items instanceof List<?> l) {
      for (Object it : l) {
        Map<String, Object> o = asMap(it);
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("name", asMap(o.get("metadata")).get("name"));
        List<Object> versions = new ArrayList<>();
        Object vs = asMap(o.get("spec")).get("versions");
        if (vs instanceof List<?> vl) {
          for (Object v : vl) {
            Map<String, Object> vm = asMap(v);
            row.putIfAbsent("chart", vm.get("name"));
            Map<String, Object> one = new LinkedHashMap<>();
            for (String f : new String[] {"version", "appVersion", "description"}) one.put(f, vm.get(f));
            versions.add(one);
          }
        }
        row.put("versions", versions);
        res.add(row);
      }
    }
    out.println(gson.toJson(res));
  }

  /** HelmRequest NAME for CHART (<repo>/<chart>) at CHART_VERSION ('' for the newest) with values and valuesFrom. */
  private void helmRequestCreate(List<String> a, PrintStream out) throws UsageException, ApiException {
    String version = a.get(0), ns = a.get(1), name = a.get(2);
    Map<String, Object> hr = object(GROUP + "/" + version, "HelmRequest", ns, name);
    Map<String, Object> spec = child(hr, "spec");
    spec.put("chart", a.get(3));
    if (!a.get(4).isEmpty()) spec.put("version", a.get(4));
    spec.put("values", jsonObject("VALUES_JSON", a.get(5)));
    List<Object> from = new ArrayList<>();
    for (String ref : a.subList(6, a.size())) {
      String[] p = ref.split(":", 3);
      String field = switch (p[0]) {
        case "configmap" -> "configMapKeyRef";
        case "secret" -> "secretKeyRef";
        default -> throw new UsageException("valuesFrom: \"" + ref + "\" is not configmap:NAME[:KEY] or secret:NAME[:KEY]");
      };
      if (p.length < 2 || p[1].isEmpty()) throw new UsageException("valuesFrom: \"" + ref + "\" names no object");
      Map<String, Object> keyRef = new LinkedHashMap<>();
      keyRef.put("name", p[1]);
      if (p.length > 2) keyRef.put("key", p[2]);
      Map<String, Object> item = new LinkedHashMap<>();
      item.put(field, keyRef);
      from.add(item);
    }
    if (!from.isEmpty()) spec.put("valuesFrom", from);
    out.println(gson.toJson(custom.createNamespacedCustomObject(GROUP, version, ns, "helmrequests", hr).execute()));
  }

  private Object mergePatch(String version, String ns, String plural, String name, Map<String, Object> patch) throws ApiException {
    V1Patch body = new V1Patch(patchGson.toJson(patch));
    return PatchUtils.patch(Object.class, () -> custom.patchNamespacedCustomObject(GROUP, version, ns, plural, name, body).buildCall(null),
        V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, client);
  }

  /** A JSON merge patch (application/merge-patch+json) of HelmRequest NAME. */
  private void helmRequestPatch(List<String> a, PrintStream out) throws UsageException, ApiException {
    out.println(gson.toJson(mergePatch(a.get(0), a.get(1), "helmrequests", a.get(2), jsonObject("MERGE_PATCH_JSON", a.get(3)))));
  }

  /**
   * Get, then replace with the fields of SPEC_JSON set in spec (a null removes one): an update with
   * the resourceVersion read, so a write in between (the controller's status) is a 409 Conflict, and
   * then it reads again, as clients of optimistic concurrency do.
   */
  private void helmRequestReplace(List<String> a, PrintStream out) throws UsageException, ApiException {
    String version = a.get(0), ns = a.get(1), name = a.get(2);
    Map<String, Object> set = jsonObject("SPEC_JSON", a.get(3));
    for (int attempt = 1;; attempt++) {
      Map<String, Object> o = fetch(new Kind(version, "helmrequests"), ns, name);
      Map<String, Object> spec = child(o, "spec");
      set.forEach((k, v) -> {
        if (v == null) spec.remove(k);
        else spec.put(k, v);
      });
      o.remove("status"); // the main resource's update ignores it; it is the controller's
      try {
        out.println(gson.toJson(custom.replaceNamespacedCustomObject(GROUP, version, ns, "helmrequests", name, o).execute()));
        return;
      } catch (ApiException e) {
        if (e.getCode() != 409 || attempt == 5) throw e;
      }
    }
  }

  /** Sets the rollback annotation to REVISION, or removes it when REVISION is empty. */
  private void rollback(List<String> a, PrintStream out) throws ApiException {
    String ann = a.size() > 4 ? a.get(4) : ROLLBACK_ANNOTATION;
    Map<String, Object> annotations = new LinkedHashMap<>();
    annotations.put(ann, a.get(3).isEmpty() ? null : a.get(3));
    Map<String, Object> patch = new LinkedHashMap<>();
    child(patch, "metadata").put("annotations", annotations);
    out.println(gson.toJson(mergePatch(a.get(0), a.get(1), "helmrequests", a.get(2), patch)));
  }

  /** Deletes with V1DeleteOptions.propagationPolicy (Foreground unless told); prints what the server answers. */
  private void delete(List<String> a, PrintStream out) throws UsageException, ApiException {
    Kind k = Kind.parse(a.get(0));
    String policy = a.size() > 3 ? a.get(3) : "Foreground";
    V1DeleteOptions opts = new V1DeleteOptions().propagationPolicy(policy);
    out.println(gson.toJson(custom.deleteNamespacedCustomObject(GROUP, k.version(), a.get(1), k.plural(), a.get(2)).body(opts).execute()));
  }

  private void get(List<String> a, PrintStream out) throws UsageException, ApiException {
    out.println(gson.toJson(fetch(Kind.parse(a.get(0)), a.get(1), a.get(2))));
  }
}
