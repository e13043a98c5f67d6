"""What a model is given to answer with (arms) and how the questions reach it (protocols)."""
