"""What a qa run asks about: batteries (Corograph's layout), question sets (dokimi's formats), `path:line`
anchors in gold text, and the code a battery is about."""
