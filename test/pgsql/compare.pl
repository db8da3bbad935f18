#!/usr/bin/perl
# compare.pl: compare the psql -a outputs of one SQL script run with gpuhash off
# and with gpuhash forced on (test/pg-compat.sh), statement by statement,
# ignoring plans.
#
#   perl compare.pl [--show N] [--verbose] SCRIPT.sql OFF.out FORCED.out [COUNT.out]
#
# --show N: lines shown per statement and run (25); --verbose: show also the
# statements that return the same rows in another order without ORDER BY.
#
# psql -a echoes every non-empty input line before it runs the statement that
# line completes, and prints the statement's results (rows, errors, notices)
# after it.  Walking each output in step with the script's lines splits it into
# units: the echoed lines of one or more statements and the output that
# follows them.  Units are matched between the runs by the script line they
# start at.  In each unit, EXPLAIN results (psql tables headed "QUERY PLAN")
# are dropped; what is left is compared as text and, when that differs, as a
# sorted multiset of lines: row order may differ, except where the statement
# has a top-level ORDER BY (then a different order counts as a difference,
# to be looked at: rows that tie on the sort keys may legitimately swap).
#
# COUNT.out is a third, forced run with auto_explain logging every executed
# plan as JSON at WARNING level: a unit used GpuHashJoin or GpuHashAgg when a
# plan logged within it names the node as its Custom Plan Provider.
#
# Prints a summary and every unit whose rows differ; exits 0 when all rows
# match, 1 when some differ (or their ORDER BY order does), 2 when an output could not be aligned with the
# script (psql stopped early: a lost connection, a crash, a timeout).
use strict;
use warnings;

my $show = 25;	# lines of output shown per run and differing unit
my $verbose = 0;	# also show the units whose rows come in another order
while (@ARGV && $ARGV[0] =~ /^--/) {
	my $o = shift;
	if ($o eq '--show') { $show = shift; }
	elsif ($o eq '--verbose') { $verbose = 1; }
	else { die "compare.pl: unknown option $o\n"; }
}
die "usage: compare.pl [--show N] [--verbose] SCRIPT.sql OFF.out FORCED.out [COUNT.out]\n"
	unless @ARGV == 3 || @ARGV == 4;
my ($script, $off_file, $on_file, $count_file) = @ARGV;

sub slurp_lines {
	my ($f) = @_;
	open(my $fh, '<', $f) or die "compare.pl: $f: $!\n";
	my @l = <$fh>;
	close $fh;
	chomp @l;
	return @l;
}

# The lines psql echoes: every non-empty line of the script except the data
# lines of COPY ... FROM STDIN (read by COPY, not echoed; up to "\.").
# (Empty lines inside quoted strings are echoed too; they are read as output
# below, identically in every run.)
my @echo;	# [text, script line number]
{
	my @src = slurp_lines($script);
	my $in_copy = 0;
	for my $n (0 .. $#src) {
		my $l = $src[$n];
		if ($in_copy) {
			$in_copy = 0 if $l eq '\\.';
			next;
		}
		next if $l eq '';
		push @echo, [$l, $n + 1];
		$in_copy = 1 if $l =~ /^\s*copy\b.*\bfrom\s+stdin\b.*;\s*$/i;
	}
}

# split_units(FILE): (units keyed by the script line of their first echoed
# line, number of script lines echoed)
sub split_units {
	my ($f) = @_;
	my @out = slurp_lines($f);
	my (%units, @order, $cur);
	my $i = 0;
	for my $l (@out) {
		if ($i < @echo && $l eq $echo[$i][0] && $l ne '') {
			if (!$cur || grep { $_ ne '' } @{$cur->{out}}) {
				$cur = { line => $echo[$i][1], sql => [], out => [] };
				$units{$cur->{line}} = $cur;
				push @order, $cur->{line};
			}
			push @{$cur->{sql}}, $l;
			$i++;
		} else {
			if (!$cur) {	# output before the first echoed line
				$cur = { line => 0, sql => [], out => [] };
				$units{0} = $cur;
				push @order, 0;
			}
			push @{$cur->{out}}, $l;
		}
	}
	return (\%units, \@order, $i);
}

# Drop psql tables headed QUERY PLAN (EXPLAIN in any format): the header, the
# dashes, the rows, "(N rows)" and the blank line after it.
sub strip_plans {
	my @in = @_;
	my @keep;
	my $dropped = 0;
	for (my $k = 0; $k < @in; $k++) {
		if ($in[$k] =~ /^\s*QUERY PLAN\s*$/ && $k + 1 < @in && $in[$k + 1] =~ /^-+$/) {
			my $j = $k + 2;
			$j++ while $j < @in && $in[$j] !~ /^\(\d+ rows?\)$/;
			if ($j < @in) {
				$j++ if $j + 1 < @in && $in[$j + 1] eq '';
				$k = $j;
				$dropped++;
				next;
			}
		}
		push @keep, $in[$k];
	}
	# blank lines carry nothing (their count follows the number of results)
	return ($dropped, grep { $_ ne '' } @keep);
}

# The statement text of a unit without comment lines, for the report.
sub sql_text {
	my ($u) = @_;
	my @s = grep { !/^\s*--/ && /\S/ } @{$u->{sql}};
	return @s;
}

# Whether the last statement of a unit sorts its result: an ORDER BY outside
# any parentheses (not a window's or an aggregate's), strings and comments
# ignored.
sub has_top_order_by {
	my ($u) = @_;
	my $t = join("\n", @{$u->{sql}});
	$t =~ s/--[^\n]*//g;
	$t =~ s/'(?:[^']|'')*'//g;
	$t =~ s/;\s*$//;
	$t =~ s/^.*;//s;	# the last statement
	my $depth = 0;
	my $flat = '';
	for my $c (split //, $t) {
		if ($c eq '(') { $depth++; next; }
		if ($c eq ')') { $depth-- if $depth > 0; next; }
		$flat .= $depth == 0 ? $c : ' ';
	}
	return $flat =~ /\border\s+by\b/i;
}

sub ms_diff {	# lines of a not in b, as multisets
	my ($a, $b) = @_;
	my %n;
	$n{$_}++ for @$b;
	my @only;
	for (@$a) {
		if ($n{$_}) { $n{$_}--; } else { push @only, $_; }
	}
	return @only;
}

my ($off, $off_order, $off_i) = split_units($off_file);
my ($on, undef, $on_i) = split_units($on_file);
my $status = 0;
for my $r (['off', $off_i], ['forced', $on_i]) {
	if ($r->[1] < @echo) {
		my $at = $echo[$r->[1]];
		print "  the $r->[0] run's output stops before script line $at->[1]: \"$at->[0]\"\n";
		$status = 2;
	}
}

my ($count, $uses_join, $uses_agg, $plans_join, $plans_agg) = (undef, {}, {}, 0, 0);
if (defined $count_file) {
	my ($cu, undef, $ci) = split_units($count_file);
	if ($ci < @echo) {
		print "  the counting run's output stops before script line $echo[$ci][1]\n";
		$status = 2;
	}
	# Units can split differently in this run (a statement without output
	# of its own logs a plan here): credit each plan to the off run's unit
	# that covers the script line its unit starts at.
	my @starts = sort { $a <=> $b } keys %$off;
	for my $k (keys %$cu) {
		my $home = 0;
		for (@starts) { last if $_ > $k; $home = $_; }
		for (@{$cu->{$k}{out}}) {
			if (/"Custom Plan Provider": "GpuHashJoin"/) { $uses_join->{$home} = 1; $plans_join++; }
			if (/"Custom Plan Provider": "GpuHashAgg"/) { $uses_agg->{$home} = 1; $plans_agg++; }
		}
	}
	$count = 1;
}

my ($compared, $explains, $same, $same_sorted, @order_only, @unordered, @differ) = (0, 0, 0, 0);
my ($used_join, $used_agg) = (0, 0);
my %seen;
for my $k (@$off_order, sort { $a <=> $b } keys %$on) {
	next if $seen{$k}++;
	my $a = $off->{$k};
	my $b = $on->{$k};
	my ($da, @oa) = $a ? strip_plans(@{$a->{out}}) : (0);
	my ($db, @ob) = $b ? strip_plans(@{$b->{out}}) : (0);
	$explains++ if $da || $db;
	next unless @oa || @ob;
	$compared++;
	$used_join++ if $uses_join->{$k};
	$used_agg++ if $uses_agg->{$k};
	if (join("\n", @oa) eq join("\n", @ob)) {
		$same++;
		next;
	}
	my @sa = sort @oa;
	my @sb = sort @ob;
	if (join("\n", @sa) eq join("\n", @sb)) {
		$same_sorted++;
		if (has_top_order_by($a || $b)) { push @order_only, $k; }
		else { push @unordered, $k; }
		next;
	}
	push @differ, $k;
}

printf "  statements compared: %d (%d row-for-row, %d same rows in another order), " .
	"EXPLAINs skipped: %d\n", $compared, $same, $same_sorted, $explains;
if ($count) {
	printf "  statements using GpuHashJoin: %d (%d plans), using GpuHashAgg: %d (%d plans)\n",
		$used_join, $plans_join, $used_agg, $plans_agg;
}
printf "  statements whose rows differ: %d, whose ORDER BY order differs: %d\n",
	scalar @differ, scalar @order_only;

sub show_unit {
	my ($k, $what) = @_;
	my $u = $off->{$k} || $on->{$k};
	my @s = sql_text($u);
	my $tags = join('', $uses_join->{$k} ? ' [GpuHashJoin]' : '', $uses_agg->{$k} ? ' [GpuHashAgg]' : '');
	print "\n  ---- $what, script line $k$tags\n";
	my @ss = @s > $show ? (@s[0 .. $show - 1], "...") : @s;
	print "    | $_\n" for @ss;
	my (undef, @oa) = $off->{$k} ? strip_plans(@{$off->{$k}{out}}) : (0);
	my (undef, @ob) = $on->{$k} ? strip_plans(@{$on->{$k}{out}}) : (0);
	my @only_a = ms_diff(\@oa, \@ob);
	my @only_b = ms_diff(\@ob, \@oa);
	my $reordered = !@only_a && !@only_b;
	if ($reordered) {	# same lines, another order: show both
		@only_a = @oa;
		@only_b = @ob;
	}
	for my $r (['off   ', \@only_a, scalar @oa], ['forced', \@only_b, scalar @ob]) {
		my @l = @{$r->[1]};
		if ($reordered) {
			printf "    %s (%d lines, in this order):\n", $r->[0], $r->[2];
		} else {
			printf "    %s (%d lines, %d not in the other run):\n", $r->[0], $r->[2], scalar @l;
		}
		@l = (@l[0 .. $show - 1], "... (" . (@l - $show) . " more)") if @l > $show;
		print "      $_\n" for @l;
	}
}

show_unit($_, 'rows differ') for @differ;
show_unit($_, 'same rows, another order despite ORDER BY (ties may legitimately swap)')
	for @order_only;
if ($verbose && @unordered) {
	printf "\n  %d statement(s) without a top-level ORDER BY return the same rows in another order:\n",
		scalar @unordered;
	show_unit($_, 'order differs, no ORDER BY') for @unordered;
}
$status = 1 if $status == 0 && (@differ || @order_only);
exit $status;
