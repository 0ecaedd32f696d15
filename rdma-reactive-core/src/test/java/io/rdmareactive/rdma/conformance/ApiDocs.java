package io.rdmareactive.rdma.conformance;

import com.sun.source.doctree.DocCommentTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.ModifiersTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.lang.model.element.Modifier;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The public API's documentation check: every public or protected type, constructor, method,
 * field and enum constant of the given packages has a Javadoc comment. Methods marked
 * {@code @Override} inherit theirs, and record components are documented by the record's
 * {@code @param} tags. The sources are only parsed (no classpath needed), so the check runs in a
 * module's host tests; javadoc's own doclint (in the build) checks the comments' syntax and links.
 */
public final class ApiDocs {
  private ApiDocs() {}

  /**
   * The undocumented declarations in {@code packages} (dotted names, sub-packages not included)
   * under the source root {@code sources}, each as {@code file:line kind name}.
   */
  public static List<String> undocumented(Path sources, List<String> packages) {
    List<Path> files = new ArrayList<>();
    for (String p : packages) {
      Path dir = sources.resolve(p.replace('.', '/'));
      try (Stream<Path> s = Files.list(dir)) {
        s.filter(f -> f.toString().endsWith(".java") && !f.getFileName().toString().equals("package-info.java"))
            .sorted().forEach(files::add);
      } catch (IOException e) {
        throw new UncheckedIOException("no package " + p + " under " + sources, e);
      }
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<String> missing = new ArrayList<>();
    try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null)) {
      JavacTask task = (JavacTask) javac.getTask(null, fm, null, List.of("-proc:none"), null,
          fm.getJavaFileObjectsFromPaths(files));
      DocTrees docs = DocTrees.instance(task);
      for (CompilationUnitTree unit : task.parse()) {
        new Scanner(unit, docs, missing).scan(unit, null);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return missing;
  }

  private static final class Scanner extends TreePathScanner<Void, Void> {
    private final CompilationUnitTree unit;
    private final DocTrees docs;
    private final List<String> missing;

    Scanner(CompilationUnitTree unit, DocTrees docs, List<String> missing) {
      this.unit = unit;
      this.docs = docs;
      this.missing = missing;
    }

    @Override
    public Void visitClass(ClassTree tree, Void unused) {
      if (!visible(tree.getModifiers(), getCurrentPath())) {
        return null; // nothing inside a hidden type is API
      }
      check(tree.getSimpleName().toString(), tree.getKind().name().toLowerCase(java.util.Locale.ROOT));
      return super.visitClass(tree, unused);
    }

    @Override
    public Void visitMethod(MethodTree tree, Void unused) {
      boolean override = tree.getModifiers().getAnnotations().stream()
          .anyMatch(a -> a.getAnnotationType().toString().endsWith("Override"));
      if (!override && visible(tree.getModifiers(), getCurrentPath())) {
        check(tree.getName().contentEquals("<init>") ? "constructor " + enclosing().getSimpleName()
            : tree.getName().toString(), "method");
      }
      return null; // no types declared inside methods are API
    }

    @Override
    public Void visitVariable(VariableTree tree, Void unused) {
      Tree.Kind parent = enclosing().getKind();
      if (parent == Tree.Kind.RECORD && !tree.getModifiers().getFlags().contains(Modifier.STATIC)) {
        return null; // a record component: the record's @param documents it
      }
      if (visible(tree.getModifiers(), getCurrentPath())) {
        check(tree.getName().toString(), "field");
      }
      return null;
    }

    private ClassTree enclosing() {
      for (TreePath p = getCurrentPath().getParentPath(); p != null; p = p.getParentPath()) {
        if (p.getLeaf() instanceof ClassTree c) {
          return c;
        }
      }
      throw new IllegalStateException("a member outside a type");
    }

    /** Public or protected, or implicitly public as an interface's member or an enum constant. */
    private boolean visible(ModifiersTree modifiers, TreePath path) {
      var flags = modifiers.getFlags();
      if (flags.contains(Modifier.PRIVATE)) {
        return false;
      }
      if (flags.contains(Modifier.PUBLIC) || flags.contains(Modifier.PROTECTED)) {
        return true;
      }
      TreePath parent = path.getParentPath();
      if (parent != null && parent.getLeaf() instanceof ClassTree c) {
        return c.getKind() == Tree.Kind.INTERFACE || c.getKind() == Tree.Kind.ANNOTATION_TYPE
            || (c.getKind() == Tree.Kind.ENUM && path.getLeaf() instanceof VariableTree v && flags.isEmpty()
                && v.getInitializer() instanceof NewClassTree n && n.getIdentifier().toString().equals(c.getSimpleName()
                    .toString())); // an enum constant
      }
      return false;
    }

    private void check(String name, String kind) {
      DocCommentTree doc = docs.getDocCommentTree(getCurrentPath());
      if (doc == null) {
        long line = unit.getLineMap().getLineNumber(docs.getSourcePositions().getStartPosition(unit,
            getCurrentPath().getLeaf()));
        missing.add(Path.of(unit.getSourceFile().toUri()).getFileName() + ":" + line + " " + kind + " " + name);
      }
    }
  }
}
